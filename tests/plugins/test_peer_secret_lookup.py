"""The Airflow plugin resolves peer secrets held by Airflow (variables, connection passwords)."""

from __future__ import annotations

import json

import pytest
from hbrep_airflow.hooks.replication import airflow_secret

from replication.secrets import SecretError, resolve_secret


def test_airflow_variables_and_connection_passwords_resolve_through_airflow(monkeypatch):
    monkeypatch.setenv("AIRFLOW_VAR_PEER_B_TOKEN", "tok-from-variable")
    monkeypatch.setenv("AIRFLOW_CONN_PEER_B_ZK", json.dumps({"conn_type": "zookeeper", "password": "u:pw-from-conn"}))
    assert airflow_secret("airflow-var", "peer_b_token") == "tok-from-variable"
    assert airflow_secret("airflow-conn", "peer_b_zk") == "u:pw-from-conn"
    assert resolve_secret("airflow-var:peer_b_token", airflow_secret) == "tok-from-variable"
    assert airflow_secret("airflow-var", "no_such_variable") is None
    with pytest.raises(SecretError, match="no Airflow variable no_such_variable"):
        resolve_secret("airflow-var:no_such_variable", airflow_secret)
