from __future__ import annotations


def test_spark_job_runs_on_local2(spark):
    assert spark.sparkContext.master == "local[2]"
    total = spark.range(100_000).selectExpr("sum(id) AS s").collect()[0]["s"]
    assert total == 4_999_950_000
