"""The VerifyReplication job: compare a source table with the peer's copy on Spark.

Run by ``spark-submit`` (``--py-files`` carries the ``replication`` package)::

    spark-submit --master local[2] --py-files hbrep.zip replication/jobs/verify.py \\
        --source-root R1 --peer-root R2 --table T [--options JSON] [--result FILE]

or in-process with :func:`replication.checks.verify.verify_tables`. The job needs nothing but its arguments:
both roots, the table and the options (``VerifyOptions.as_dict()`` as JSON). It prints one
``NAME=value`` line per counter and writes the VerifyResult as JSON to ``--result`` when given.
:func:`submit_verify` runs it through spark-submit and reads the result back.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from replication.checks.verify import VerifyOptions, VerifyResult, verify_tables
from replication.jobs.submit import spark_submit
from replication.spark_tokens import delegation_tokens
from replication.tables.spark_views import hadoop_filesystem

SCRIPT = Path(__file__).resolve()


def main(argv: list[str] | None = None) -> int:
    """spark-submit entry: verify, print the counters, write the result file."""
    parser = argparse.ArgumentParser(prog="verify.py")
    parser.add_argument("--source-root", required=True)
    parser.add_argument("--peer-root", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--options", default="{}", help="VerifyOptions as JSON")
    parser.add_argument("--result", help="write the VerifyResult here as JSON")
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession  # only the job's driver starts Spark

    options = VerifyOptions.from_dict(json.loads(args.options))
    spark = SparkSession.builder.appName(f"hbrep-verify-{args.table}").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    roots = {hadoop_filesystem(args.source_root), hadoop_filesystem(args.peer_root)} - {None}
    try:
        # on a standalone master with a keytab, the executors read the roots with delegation tokens the driver gets
        with delegation_tokens(spark, sorted(roots)):
            result = verify_tables(spark, args.source_root, args.peer_root, args.table, options)
    finally:
        spark.stop()
    if args.result:
        tmp = f"{args.result}.tmp"
        Path(tmp).write_text(json.dumps(result.as_dict(), sort_keys=True))
        os.replace(tmp, args.result)
    for line in result.counter_lines():
        print(line)
    return 0


def submit_verify(
    source_root: str,
    peer_root: str,
    table: str,
    options_json: str,
    *,
    master: str,
    work_dir: str | os.PathLike[str] | None = None,
    timeout_s: float | None = None,
    spark_conf: dict[str, str] | None = None,
):
    """Run this job through spark-submit (``spark_conf``: more ``--conf`` settings, such as
    ``replication.kerberos.spark_login_conf``'s) and return its VerifyResult (SparkJobFailed if it fails)."""

    with tempfile.TemporaryDirectory(prefix="hbrep-verify-", dir=work_dir) as tmp:
        result_path = os.path.join(tmp, "result.json")
        args = ["--source-root", source_root, "--peer-root", peer_root, "--table", table]
        args += ["--options", options_json, "--result", result_path]
        spark_submit(SCRIPT, args, master=master, work_dir=tmp, timeout_s=timeout_s, name=f"hbrep-verify-{table}",
                     conf=spark_conf)  # fmt: skip
        return VerifyResult.from_dict(json.loads(Path(result_path).read_text()))


if __name__ == "__main__":
    sys.exit(main())
