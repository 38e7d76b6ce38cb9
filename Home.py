"""klue-viz home page: `streamlit run app.py` (app.py links here: Streamlit names the main page after this file, "Home")."""

from klue_viz.ui.home import home_page

home_page()
