"""Document conversion service: conversion, Markdown rendering, storage and batches."""
