"""Images (PNG, JPEG, TIFF, WebP): the reader, by OCR."""
