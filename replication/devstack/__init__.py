"""The dev stack: the processes hbrep starts on one machine for `make demo`, `make up` and the tests.

Embedded ZooKeeper and clusters, Airflow's environment, and the real Apache components resolved from
Maven Central (HBase, HDFS) or shipped with pyspark (Spark Connect), each a JVM on 127.0.0.1 owned
through a state folder (pid file, log, port).
"""
