"""Reference semantics: graphs interpreted with numpy."""
