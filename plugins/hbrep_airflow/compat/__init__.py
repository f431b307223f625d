"""Work-arounds for Airflow behaviour hbrep depends on, each with the upstream reference and its removal
condition."""
