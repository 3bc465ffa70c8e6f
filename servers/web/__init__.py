"""The web view served by `wiki serve` beside the API: server-rendered pages for people (views.py),
signing in and CSRF (session.py), markdown through the sanitiser and the graph's drawing (render.py)."""
