"""The sink's one-pass grouping of a request's entries (``entry_groups``) against the grouping HBase's
ReplicationSink.replicateEntries does entry by entry (table, then the exact cluster-id list)."""

from __future__ import annotations

import uuid
from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from replication.cluster.rpc import uuid_to_pb
from replication.cluster.sink import entry_groups
from replication.proto import Admin_pb2

_IDS = [uuid.UUID(int=1), uuid.UUID(int=2**127 + 5)]
_entries = st.lists(
    st.tuples(
        st.sampled_from([b"t1", b"ns:t2"]),
        st.lists(st.sampled_from(_IDS), max_size=2),
        st.integers(0, 3),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(_entries)
def test_groups_hold_each_entrys_cells_in_order_under_its_table_and_cluster_ids(drawn):
    request = Admin_pb2.ReplicateWALEntryRequest()
    for table, ids, count in drawn:
        entry = request.entry.add(associated_cell_count=count)
        entry.key.table_name = table
        entry.key.encoded_region_name = b"r"
        entry.key.log_sequence_number, entry.key.write_time = 1, 2
        entry.key.cluster_ids.extend(uuid_to_pb(u) for u in ids)
    request = Admin_pb2.ReplicateWALEntryRequest.FromString(request.SerializeToString())
    expected: dict[tuple[str, tuple[uuid.UUID, ...]], list[int]] = defaultdict(list)
    index = 0
    for table, ids, count in drawn:
        if count:
            expected[(table.decode(), tuple(ids))].extend(range(index, index + count))
        index += count
    groups = entry_groups(request.entry, [count for _t, _i, count in drawn])
    assert {name: [i for start, stop in runs for i in range(start, stop)] for name, runs in groups.items()} == expected
    assert list(groups) == list(expected)  # groups are written in the order their first entry came
