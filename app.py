"""klue-viz home page: `streamlit run app.py`."""

from klue_viz.ui.home import home_page

home_page()
