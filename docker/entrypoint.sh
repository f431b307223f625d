#!/bin/sh
# Entry point of the hbrep image. Subcommands (anything else is exec'd as given):
#   regionservers NAME ROOT N   start cluster NAME (N region servers, root ROOT, key $HBREP_CLUSTER)
#                               with `hbrep cluster start`, stay in the foreground while they run,
#                               and stop them cleanly (`hbrep cluster stop`) on SIGTERM.
#   spark-master | spark-worker MASTER_URL
#                               a Spark standalone master / worker from the pyspark the image ships.
#   spark-connect               the long-lived Spark Connect server the ship DAG runs on (hbrep.spark.mode
#                               connect), Spark's own SparkConnectServer, its executors on the standalone
#                               master ($HBREP__hbrep__spark__master), gRPC on port 15002 of this container.
#   airflow-init                migrate the metadata DB and create the admin user (one-shot).
set -eu

case "${1:-}" in
  regionservers)
    name="$2"; root="$3"; count="$4"
    hbrep cluster start "$name" --root "$root" --regionservers "$count"
    trap 'hbrep cluster stop "$name"; exit 0' TERM INT
    while hbrep rs list >/dev/null 2>&1; do sleep 10 & wait $!; done
    echo "hbrep: region servers of $name are gone" >&2
    exit 1
    ;;
  spark-master)
    exec spark-class org.apache.spark.deploy.master.Master --host 0.0.0.0 --port 7077 --webui-port 8080
    ;;
  spark-worker)
    exec spark-class org.apache.spark.deploy.worker.Worker --webui-port 8081 "$2"
    ;;
  spark-connect)
    exec spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer \
      --name "hbrep Spark Connect server" --master "$HBREP__hbrep__spark__master" \
      --conf spark.connect.grpc.binding.address=0.0.0.0 --conf spark.connect.grpc.binding.port=15002 \
      --conf spark.python.worker.reuse=true spark-internal
    ;;
  airflow-init)
    airflow db migrate
    exec airflow connections list >/dev/null
    ;;
  *)
    exec "$@"
    ;;
esac
