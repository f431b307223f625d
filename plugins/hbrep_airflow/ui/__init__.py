"""The Replication view: a FastAPI app (JSON status + one self-contained HTML page) mounted by the plugin."""
