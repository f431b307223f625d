"""Issue 44: every key ``hbrep conf`` lists changes what hbrep does, shown by a test that changes it and
observes the effect (replaces issue 23's check that the key's string appears in the code, which a key read
and then ignored passed). Each listed key is in exactly one of:

- ``BEHAVIOUR``: the tests that set the key and assert what changes (named as pytest node ids);
- ``replication.config.HBASE_ONLY_KEYS``: listed for a real HBase, marked "HBase's only" by ``hbrep conf``.

There is no third group: a key hbrep lists and acts on without such a test fails this module.

This module checks the bookkeeping: every key is classified, and every named test exists and sets the key.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from python_source import parse_python

from replication.config import DEFAULTS, HBASE_ONLY_KEYS

REPO = Path(__file__).resolve().parents[1]
RPC_TLS = "tests/security/test_security_rpc_tls.py::"
ZK_TLS = "tests/security/test_security_tls_everywhere.py::"

BEHAVIOUR: dict[str, list[str]] = {
    "hbase.replication": [
        "tests/source/test_replication_switch.py::test_switched_off_nothing_is_queued_shipped_or_claimed"
    ],
    "replication.source.size.capacity": [
        "tests/source/test_batch_bounds.py::test_a_batch_closes_at_the_entry_that_reaches_its_size_bound",
        "tests/source/test_batch_bounds.py::test_the_first_bound_reached_closes_the_batch",
    ],
    "replication.source.nb.capacity": [
        "tests/source/test_batch_bounds.py::test_a_batch_closes_at_its_entry_bound",
        "tests/source/test_batch_bounds.py::test_the_first_bound_reached_closes_the_batch",
    ],
    "replication.source.eof.autorecovery": [
        "tests/source/test_batch_bounds.py::test_a_zero_length_finished_wal_stops_the_queue_unless_eof_autorecovery"
    ],
    "replication.source.log.queue.warn": [
        "tests/source/test_log_queue_warn.py::test_the_threshold_is_read_from_the_configuration"
    ],
    "replication.sleep.before.failover": [
        "tests/failover/test_failover.py::test_failover_waits_sleep_before_failover_and_agrees_across_runs"
    ],
    "replication.sink.client.ops.timeout": [
        "tests/cluster/test_replication_handlers.py::test_one_handler_serializes_replication_requests_and_two_do_not"
    ],
    "hbase.replication.rpc.codec": [
        "tests/test_tags.py::test_tags_survive_flush_ship_with_tags_and_are_stripped_by_key_value_codec"
    ],
    "hbase.replication.drop.on.deleted.table": [
        "tests/source/test_endpoint.py::test_missing_table_on_peer_fails_unless_dropped_and_gone_on_source"
    ],
    "hbase.regionserver.replication.handler.count": [
        "tests/cluster/test_replication_handlers.py::test_one_handler_serializes_replication_requests_and_two_do_not"
    ],
    "zookeeper.znode.replication": ["tests/zk/test_queue_info.py::test_layout_follows_config_keys"],
    "zookeeper.znode.replication.rs": ["tests/zk/test_queue_info.py::test_layout_follows_config_keys"],
    "zookeeper.znode.rs": ["tests/zk/test_queue_info.py::test_layout_follows_config_keys"],
    "zookeeper.session.timeout": [
        "tests/zk/test_session_timeout.py::test_the_configured_session_timeout_is_what_a_dead_clients_ephemeral_node_outlives_it_by"
    ],
    "hbase.regionserver.logroll.period": ["tests/cluster/test_roll_archive.py::test_period_roll_and_interval_flush"],
    "hbase.regionserver.optionalcacheflushinterval": [
        "tests/cluster/test_roll_archive.py::test_period_roll_and_interval_flush"
    ],
    "hbase.regionserver.maxlogs": ["tests/cluster/test_roll_archive.py::test_maxlogs_forces_flush_and_archive"],
    "hbase.separate.oldlogdir.by.regionserver": [
        "tests/cluster/test_roll_archive.py::test_separate_oldlogdir_archives_under_the_servers_folder"
    ],
    "hbase.regionserver.hostname": ["tests/cluster/test_sink.py::test_region_server_binds_and_advertises_from_config"],
    "hbase.master.logcleaner.ttl": [
        "tests/failover/test_failover.py::test_disabled_peer_keeps_its_wals_from_the_cleaner"
    ],
    "hbase.master.cleaner.interval": [
        "tests/dags/test_cleaner_interval.py::test_the_cleaner_runs_every_configured_interval"
    ],
    "hbrep.spark.connect.ship.package": [
        "tests/jobs/test_connect_ship.py::test_the_package_reaches_the_workers_as_an_artifact"
    ],
    "hbrep.zookeeper.znode.root": [
        "tests/zk/test_migration.py::test_a_configured_root_and_two_processes_migrating_at_once"
    ],
    "hbrep.source.bandwidth.split": [
        "tests/source/test_throttler.py::test_each_source_gets_the_peers_whole_bandwidth_unless_split_is_asked"
    ],
    "hbrep.consistency.token.ttl.ms": [
        "tests/operations/test_consistency.py::test_unknown_malformed_and_expired_tokens_are_errors_and_expired_records_go"
    ],
    "hbrep.regionserver.hbase.rpc.enabled": [
        "tests/cluster/test_hbase_rpc_sink.py::test_the_listener_can_be_turned_off"
    ],
    "hbrep.regionserver.hbase.rpc.port": [
        "tests/cluster/test_hbase_rpc_sink.py::test_a_taken_hbase_rpc_port_stops_the_region_server_with_one_line_naming_it"
    ],
    "hbrep.regionserver.gc.thresholds": [
        "tests/cluster/test_gc_tuning.py::test_thresholds_come_from_the_configuration"
    ],
    "hbrep.failover.mode": [
        "tests/zk/test_shadow_peer_marks.py::test_a_registered_real_hbase_opens_as_a_source_of_kind_hbase_and_failover_leaves_it_to_hbase"
    ],
    "replication.source.sleepforretries": [
        "tests/source/test_endpoint.py::test_failures_back_off_with_growing_multiplier_then_succeed"
    ],
    "replication.source.maxretriesmultiplier": [
        "tests/source/test_endpoint.py::test_failures_back_off_with_growing_multiplier_then_succeed"
    ],
    "hbrep.source.ship.max.attempts": [
        "tests/source/test_endpoint.py::test_gives_up_after_the_attempt_budget_with_clear_error"
    ],
    "hbase.replication.source.maxthreads": [
        "tests/source/test_endpoint_keys.py::test_maxthreads_bounds_the_parallel_lists"
    ],
    "replication.source.shipedits.timeout": [
        "tests/source/test_endpoint_keys.py::test_shipedits_timeout_is_each_sink_calls_timeout"
    ],
    "hbase.replication.drop.on.deleted.columnfamily": [
        "tests/source/test_endpoint_keys.py::test_drop_on_deleted_columnfamily"
    ],
    "zookeeper.znode.parent": [
        "tests/zk/test_znode_names.py::test_renamed_znodes_are_where_peers_and_the_cluster_id_live"
    ],
    "zookeeper.znode.clusterId": [
        "tests/zk/test_znode_names.py::test_renamed_znodes_are_where_peers_and_the_cluster_id_live"
    ],
    "zookeeper.znode.replication.peers": [
        "tests/zk/test_znode_names.py::test_renamed_znodes_are_where_peers_and_the_cluster_id_live"
    ],
    "zookeeper.znode.replication.peers.state": [
        "tests/zk/test_znode_names.py::test_renamed_znodes_are_where_peers_and_the_cluster_id_live"
    ],
    "zookeeper.znode.replication.hfile.refs": [
        "tests/zk/test_znode_names.py::test_renamed_znodes_are_where_peers_and_the_cluster_id_live"
    ],
    "zookeeper.znode.replication.regions": [
        "tests/zk/test_znode_names.py::test_renamed_znodes_are_where_peers_and_the_cluster_id_live"
    ],
    "hbase.regionserver.wal.enablecompression": [
        "tests/cluster/test_refused_settings.py::test_a_setting_hbrep_cannot_honour_stops_the_region_server"
    ],
    "hbase.replication.bulkload.enabled": [
        "tests/cluster/test_refused_settings.py::test_bulk_load_replication_on_starts_the_region_server"
    ],
    "hbrep.lag.alert.ms": [
        "tests/dags/test_chore_dags.py::test_ship_run_fails_loudly_when_lag_passes_the_alert_threshold"
    ],
    "hbrep.spark.mode": ["tests/dags/test_ship_dag_connect.py::test_connect_mode_ships_through_the_connection"],
    "hbrep.replicated.through.margin.ms": [
        "tests/cli/test_lag_target_margin.py::test_the_margin_decides_which_lag_targets_are_refused"
    ],
    "hbase.regionserver.hlog.blocksize": [
        "tests/cluster/test_roll_size.py::test_roll_size_is_blocksize_times_multiplier"
    ],
    "hbase.regionserver.logroll.multiplier": [
        "tests/cluster/test_roll_size.py::test_roll_size_is_blocksize_times_multiplier"
    ],
    "hbase.rpc.timeout": [
        "tests/cluster/test_rpc_timeout.py::test_a_call_to_a_silent_server_fails_after_the_configured_timeout"
    ],
    "hbase.zookeeper.quorum": [
        "tests/cli/test_cluster_from_conf.py::test_the_quorum_port_and_parent_keys_pick_the_cluster"
    ],
    "hbase.zookeeper.property.clientPort": [
        "tests/cli/test_cluster_from_conf.py::test_the_quorum_port_and_parent_keys_pick_the_cluster"
    ],
    "hbrep.ship.lease.ms": [
        "tests/cluster/test_ship_lease_ttl.py::test_a_dead_owners_lease_blocks_others_for_the_configured_time"
    ],
    "replication.source.ratio": [
        "tests/source/test_endpoint_keys.py::test_ratio_is_the_share_of_the_peers_servers_shipped_to"
    ],
    "replication.bad.sink.threshold": [
        "tests/source/test_endpoint_keys.py::test_bad_sink_threshold_is_how_many_failures_drop_a_sink"
    ],
    "replication.source.nb.batches": [
        "tests/source/test_source_keys.py::test_nb_batches_is_how_far_the_reader_reads_ahead_of_a_blocked_shipper"
    ],
    "replication.source.per.peer.node.bandwidth": [
        "tests/source/test_source_keys.py::test_per_peer_node_bandwidth_throttles_a_peer_without_its_own"
    ],
    "replication.executor.workers": [
        "tests/failover/test_failover.py::test_executor_workers_bounds_how_many_dead_servers_one_run_handles"
    ],
    "hbase.ipc.max.request.size": [
        "tests/cluster/test_region_server_keys.py::test_a_request_over_the_configured_max_request_size_is_refused"
    ],
    "hbase.hregion.memstore.flush.size": [
        "tests/cluster/test_region_server_keys.py::test_a_region_flushes_when_its_memstore_reaches_the_configured_size"
    ],
    "hbase.regionserver.ipc.address": [
        "tests/cluster/test_region_server_keys.py::test_the_region_server_binds_the_configured_address_or_stops_naming_it"
    ],
    "hbase.regionserver.port": [
        "tests/cluster/test_region_server_keys.py::test_the_region_server_listens_on_the_configured_port"
    ],
    "hbrep.state.dir": ["tests/cli/test_spark_commands.py::test_start_status_crash_restart_stop"],
    "hbrep.spark.master": [
        "tests/devstack/test_dist_stack.py::test_spark_submit_mode_ships_and_verifies_on_the_clusters_master"
    ],
    "hbrep.spark.connect.url": [
        "tests/jobs/test_connect_ship.py::test_a_server_that_is_not_there_fails_within_seconds_with_one_line",
        "tests/cli/test_spark_commands.py::test_start_status_crash_restart_stop",
    ],
    "hbrep.spark.connect.port": ["tests/cli/test_spark_commands.py::test_start_status_crash_restart_stop"],
    "hbrep.spark.connect.driver.memory.mb": ["tests/cli/test_spark_commands.py::test_start_status_crash_restart_stop"],
    "hbrep.spark.connect.session": [
        "tests/jobs/test_connect_ship.py::test_clients_share_one_server_session_and_its_warm_workers"
    ],
    "hbrep.spark.connect.retries": [
        "tests/jobs/test_connect_retries.py::test_the_client_retries_as_many_times_as_configured"
    ],
    "hbrep.ship.window.ms": [
        "tests/jobs/test_ship_window.py::test_a_stop_request_ends_the_window_after_the_pass_in_flight_and_commits_it"
    ],
    "hbrep.cluster.token": [
        "tests/security/test_security_rpc.py::test_sink_rejects_requests_without_or_with_a_wrong_token"
    ],
    "hbrep.zk.auth": [
        "tests/security/test_security_zk_acl.py::test_without_the_credentials_queues_cannot_be_read_or_changed"
    ],
    **{
        key: [
            f"{RPC_TLS}test_a_client_with_a_certificate_from_the_ca_is_served_and_every_other_client_is_refused",
            f"{RPC_TLS}test_the_cluster_client_writes_over_tls_and_a_plain_text_client_cannot",
        ]
        for key in ("hbrep.rpc.tls.enabled", "hbrep.rpc.tls.cert", "hbrep.rpc.tls.key", "hbrep.rpc.tls.ca")
    },
    "hbrep.rpc.tls.client.auth": [
        f"{RPC_TLS}test_a_client_with_a_certificate_from_the_ca_is_served_and_every_other_client_is_refused",
        f"{RPC_TLS}test_without_client_auth_a_tls_client_needs_no_certificate",
    ],
    **{
        key: [
            f"{ZK_TLS}test_plain_text_and_certificate_less_zookeeper_clients_are_refused",
            f"{ZK_TLS}test_a_ship_cycle_runs_with_tls_on_every_connection",
        ]
        for key in ("hbrep.zk.tls.enabled", "hbrep.zk.tls.cert", "hbrep.zk.tls.key", "hbrep.zk.tls.ca")
    },
    # tests/secure/conftest.py sets the three keys (KerberizedZooKeeper.settings) for every command it runs
    "hbase.security.authentication": [
        "tests/secure/test_zookeeper_sasl.py::test_hbrep_commands_authenticate_with_kerberos_and_their_znodes_belong_to_its_identity",
        "tests/test_kerberos.py::test_simple_authentication_asks_for_no_kerberos_identity",
    ],
    "hbase.client.kerberos.principal": [
        "tests/secure/test_zookeeper_sasl.py::test_refusals_are_one_line_and_nothing_is_written",
        "tests/test_kerberos.py::test_kerberos_takes_hbases_principal_and_keytab_keys",
    ],
    "hbase.client.keytab.file": [
        "tests/secure/test_zookeeper_sasl.py::test_refusals_are_one_line_and_nothing_is_written",
        "tests/test_kerberos.py::test_kerberos_takes_hbases_principal_and_keytab_keys",
    ],
    "hbrep.kerberos.krb5.conf": [
        "tests/test_kerberos.py::test_the_realms_configuration_travels_with_the_configuration"
    ],
    # Kerberos on hbrep's HBase RPC client, against a real Kerberized HBase 2.6
    "hbase.master.kerberos.principal": [
        "tests/secure/test_hbase_rpc_kerberos.py::test_refusals_are_one_line_naming_what_is_wrong",
        "tests/cluster/hbase_rpc/test_sasl.py::test_kerberos_settings_come_from_hbases_keys",
    ],
    "hbase.regionserver.kerberos.principal": [
        "tests/secure/test_hbase_rpc_kerberos.py::test_a_ship_cycle_replicates_into_the_kerberized_hbase",
        "tests/cluster/hbase_rpc/test_sasl.py::test_kerberos_settings_come_from_hbases_keys",
    ],
    "hbase.rpc.protection": ["tests/cluster/hbase_rpc/test_sasl.py::test_kerberos_settings_come_from_hbases_keys"],
    "hbase.ipc.client.fallback-to-simple-auth-allowed": [
        "tests/interop/test_hbase_master_cli.py::test_a_kerberos_client_at_a_simple_hbase_is_refused_unless_fallback_is_allowed",
        "tests/cluster/hbase_rpc/test_sasl.py::test_kerberos_settings_come_from_hbases_keys",
    ],
    # Kerberos on hbrep's HBase RPC listener (HBase's server keys)
    "hbase.regionserver.keytab.file": [
        "tests/cluster/hbase_rpc/test_server_kerberos.py::test_a_listener_that_cannot_accept_as_its_principal_does_not_start",
        "tests/secure/test_hbase_rpc_kerberos.py::test_a_kerberized_hbase_replicates_into_a_kerberized_hbrep_cluster_across_a_sink_kill",
    ],
    "hbase.ipc.server.fallback-to-simple-auth-allowed": [
        "tests/cluster/hbase_rpc/test_server_kerberos.py::test_simple_clients_are_served_when_the_listener_allows_fallback"
    ],
    "hbase.unsafe.client.kerberos.hostname.disable.reversedns": [
        "tests/cluster/hbase_rpc/test_sasl.py::test_kerberos_settings_come_from_hbases_keys"
    ],
    "hbase.rpc.crypto.encryption.aes.enabled": [
        "tests/secure/test_hbase_rpc_kerberos.py::test_privacy_with_aes_wraps_the_calls_with_hbases_crypto_aes",
        "tests/cluster/hbase_rpc/test_sasl.py::test_kerberos_settings_come_from_hbases_keys",
    ],
    # HBase's RPC TLS on the HBase RPC listener of hbrep's region servers (HBase's server keys)
    "hbase.server.netty.tls.enabled": [
        "tests/secure/test_hbase_rpc_tls.py::test_a_real_hbase_replicates_into_hbreps_listener_over_tls_only",
        "tests/cluster/hbase_rpc/test_server_tls.py::test_a_client_with_the_cas_certificate_is_served_and_the_others_are_refused",
    ],
    "hbase.server.netty.tls.supportplaintext": [
        "tests/cluster/hbase_rpc/test_server_tls.py::test_plain_text_is_served_beside_tls_while_supportplaintext_is_on"
    ],
    "hbase.server.netty.tls.client.auth.mode": [
        "tests/cluster/hbase_rpc/test_server_tls.py::test_client_auth_optional_serves_a_client_without_a_certificate"
    ],
    # HBase's RPC TLS on hbrep's HBase RPC client, against a real HBase 2.6 serving TLS only
    "hbase.client.netty.tls.enabled": [
        "tests/secure/test_hbase_rpc_tls.py::test_master_and_table_commands_work_over_tls",
        "tests/cluster/hbase_rpc/test_tls.py::test_tls_is_off_unless_enabled_and_checks_host_names_by_default",
    ],
    "hbase.client.netty.tls.verify.server.hostname": [
        "tests/secure/test_hbase_rpc_tls.py::test_a_server_certificate_not_naming_the_host_is_refused_unless_verification_is_off",
        "tests/cluster/hbase_rpc/test_tls.py::test_tls_is_off_unless_enabled_and_checks_host_names_by_default",
    ],
    "hbase.rpc.tls.truststore.location": [
        "tests/secure/test_hbase_rpc_tls.py::test_a_client_trusting_another_ca_is_refused_naming_the_server"
    ],
    "hbase.rpc.tls.truststore.type": [
        "tests/secure/test_hbase_rpc_tls.py::test_pkcs12_key_and_trust_stores_open_with_their_passwords"
    ],
    "hbase.rpc.tls.truststore.password": [
        "tests/secure/test_hbase_rpc_tls.py::test_pkcs12_key_and_trust_stores_open_with_their_passwords"
    ],
    "hbase.rpc.tls.keystore.location": [
        "tests/secure/test_hbase_rpc_tls.py::test_pkcs12_key_and_trust_stores_open_with_their_passwords"
    ],
    "hbase.rpc.tls.keystore.type": [
        "tests/secure/test_hbase_rpc_tls.py::test_pkcs12_key_and_trust_stores_open_with_their_passwords",
        "tests/cluster/hbase_rpc/test_tls.py::test_java_only_store_types_are_refused_naming_the_key",
    ],
    "hbase.rpc.tls.keystore.password": [
        "tests/secure/test_hbase_rpc_tls.py::test_pkcs12_key_and_trust_stores_open_with_their_passwords"
    ],
}


def test_every_listed_key_has_a_behaviour_test_or_is_hbases_only():
    """A key added to ``DEFAULTS`` (what ``hbrep conf`` lists) fails this until a test shows what it changes,
    or it is marked HBase's only; a key in both, or a test list left empty, fails too."""
    untested = sorted(set(DEFAULTS) - set(BEHAVIOUR) - set(HBASE_ONLY_KEYS))
    assert not untested, f"listed by hbrep conf with no behaviour test: {untested}"
    assert not set(BEHAVIOUR) - set(DEFAULTS), sorted(set(BEHAVIOUR) - set(DEFAULTS))
    assert not set(BEHAVIOUR) & set(HBASE_ONLY_KEYS), "a key with a behaviour test is marked HBase's only"
    assert all(BEHAVIOUR[key] for key in BEHAVIOUR), "a key with an empty test list"


def _test_function(node_id: str) -> tuple[str, str]:
    """(the test function's source, its module's source) of ``path::name``."""
    path, name = node_id.split("::")
    source = (REPO / path).read_text(encoding="utf-8")
    for node in ast.walk(parse_python(source)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment(source, node) or "", source
    raise AssertionError(f"{node_id}: no such test")


@pytest.mark.parametrize("key", sorted(BEHAVIOUR))
def test_each_named_test_exists_and_sets_the_key(key):
    for node_id in BEHAVIOUR[key]:
        function, module = _test_function(node_id)
        env_form = "HBREP__" + key.replace(".", "__")
        # the key is set in the test itself or in its module (a constant or helper the test uses)
        assert any(form in text for form in (key, env_form) for text in (function, module)), f"{node_id}: {key} not set"
