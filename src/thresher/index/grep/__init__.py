"""Grep over an index's chunk texts: the pattern guard and the plain scan
(``guard``), the pattern's parse tree (``syntax``), the trigram plan (``plan``), the
trigram side index (``side_index``) and the matched lines (``lines``)."""
