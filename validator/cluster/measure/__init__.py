"""Pairwise fabric measurements: which tools, how they are started, what they found.

``parsers`` holds the pure parsers (tested on recorded output); ``runner`` starts the
tools on hosts through a transport, pair by pair and round by round (``plan``).
"""
