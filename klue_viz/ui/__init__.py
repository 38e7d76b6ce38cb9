"""The Streamlit layer: thin pages over the pure core (state, caching, page layouts).

The only floor that imports Streamlit. May import: every floor; nothing imports it.
"""
