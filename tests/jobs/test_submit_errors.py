"""A failed spark-submit is one line naming why (``replication.jobs.submit.failure_cause``), its output kept in
a log file; run against a real spark-submit of a script that fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from replication.jobs.submit import SparkJobFailed, failure_cause, spark_submit

PY4J_FAILURE = """\
26/11/29 21:30:26 WARN FileStreamSink: Assume no metadata directory. Error while looking for metadata
org.apache.hadoop.security.AccessControlException: Authentication required
\tat org.apache.hadoop.hdfs.web.WebHdfsFileSystem.validateResponse(WebHdfsFileSystem.java:502)
Traceback (most recent call last):
  File "/work/main/replication/jobs/verify.py", line 81, in <module>
    sys.exit(main())
  File "pyspark/errors/exceptions/captured.py", line 263, in deco
py4j.protocol.Py4JJavaError: An error occurred while calling o39.parquet.
: org.apache.hadoop.security.AccessControlException: Authentication required
\tat org.apache.hadoop.hdfs.web.WebHdfsFileSystem.validateResponse(WebHdfsFileSystem.java:502)
\tSuppressed: org.apache.spark.util.Utils$OriginalTryStackTraceException: Full stacktrace of original caller
26/11/29 21:30:27 INFO ShutdownHookManager: Shutdown hook called
"""


def test_the_java_exception_a_py4j_error_wraps_is_the_cause():
    assert failure_cause(PY4J_FAILURE) == "org.apache.hadoop.security.AccessControlException: Authentication required"


def test_a_python_exception_is_the_last_line_of_its_traceback():
    output = 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: no table t\nINFO bye\n'
    assert failure_cause(output) == "ValueError: no table t"


def test_without_a_traceback_the_last_exception_line_then_the_last_line():
    assert failure_cause("x\nException in thread main java.lang.X\njava.io.IOException: disk\n\tat a.b\n") == (
        "java.io.IOException: disk"
    )
    assert failure_cause("only this\n") == "only this"
    assert failure_cause("") == "no output"


@pytest.mark.slow
def test_a_failing_application_is_one_line_with_its_cause(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("raise RuntimeError('the table t has no family f')\n")
    with pytest.raises(SparkJobFailed) as info:
        spark_submit(script, [], master="local[1]", work_dir=tmp_path, timeout_s=300)
    message = str(info.value)
    assert "\n" not in message and "RuntimeError: the table t has no family f" in message, message
    log = message.rsplit("(its output: ", 1)[1].rstrip(")")
    assert "Traceback" in Path(log).read_text()
