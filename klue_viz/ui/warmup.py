"""Load the front-end code of a task page's elements before the first run arrives (issue 19, item 25).

Streamlit's browser code loads each element type (chart, table, multiselect, button, ...) lazily: the first time
one is drawn in a browser tab, the tab fetches and parses that type's code and shows a grey placeholder
(`data-testid="stSkeleton"`) until then. A task page without runs (real dev sets before an upload) draws none of
them, so after the first upload every chart, filter and button of the page stayed grey for 1-3 s *after* the script
had finished, while the tab loaded their code one type after another.

`warm_elements` draws one disabled, invisible instance of each element type the page draws for a run, so the tab
loads their code while the user is still choosing a file. Streamlit has no setting to preload element code (its
chunk names are hashed per release), so drawing the elements is the one way that keeps working across versions.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from klue_viz.ui.tables import show_table

#: The container's key; CSS keeps it out of sight and out of the layout (it still renders, which is the point).
WARM_KEY = "kv_warmup"
WARM_STYLE = (f"<style>.st-key-{WARM_KEY}{{position:absolute !important;left:-10000px;top:0;width:600px;height:1px;"
              "overflow:hidden;visibility:hidden;pointer-events:none}</style>")


def warm_elements() -> None:
    """Draw, out of sight, one of each element a run's view uses, so their front-end code is loaded before it is needed."""
    st.markdown(WARM_STYLE, unsafe_allow_html=True)
    frame = pd.DataFrame({"a": [1]})
    with st.container(key=WARM_KEY):
        st.metric("warm-up", 0)
        st.plotly_chart(go.Figure(), key=f"{WARM_KEY}_chart")
        show_table(st, frame, key=f"{WARM_KEY}_frame")
        st.table(frame)
        st.button("warm-up", key=f"{WARM_KEY}_button", disabled=True)
        st.download_button("warm-up", b"", key=f"{WARM_KEY}_download", disabled=True)
        st.toggle("warm-up", key=f"{WARM_KEY}_toggle", disabled=True)
        st.checkbox("warm-up", key=f"{WARM_KEY}_checkbox", disabled=True)
        st.radio("warm-up", ["a"], key=f"{WARM_KEY}_radio", disabled=True)
        st.selectbox("warm-up", ["a"], key=f"{WARM_KEY}_select", disabled=True)
        st.multiselect("warm-up", ["a"], key=f"{WARM_KEY}_multi", disabled=True)
        st.number_input("warm-up", 1, 2, key=f"{WARM_KEY}_number", disabled=True)
        st.segmented_control("warm-up", ["a"], key=f"{WARM_KEY}_segments", disabled=True)
        st.text_area("warm-up", key=f"{WARM_KEY}_text", disabled=True)
        st.slider("warm-up", 0, 1, key=f"{WARM_KEY}_slider", disabled=True)
        st.code("warm-up", language=None)
