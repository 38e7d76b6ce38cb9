"""The Streamlit layer: thin pages over the pure core (state, caching, page layouts)."""
