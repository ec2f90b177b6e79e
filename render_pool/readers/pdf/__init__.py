"""The PDF reader: text layer, layout, tables, tagged structure and OCR to the model.

Entry point: ``reader.read_pdf``.
"""
