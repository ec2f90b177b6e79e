"""Formats read through LibreOffice (ODT, ODS, ODP, DOC, XLS, PPT, RTF): the reader, the
sandbox it runs in, the link removal before and the output checks after."""
