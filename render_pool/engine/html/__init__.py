"""HTML: the reader of uploaded pages, the HTML-to-model builder other
readers share, and the writer."""
