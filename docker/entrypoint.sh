#!/bin/sh
# Entry point of the hbrep image. Subcommands (anything else is exec'd as given):
#   regionservers NAME ROOT N   start cluster NAME (N region servers, root ROOT, key $HBREP_CLUSTER)
#                               with `hbrep cluster start`, stay in the foreground while they run,
#                               and stop them cleanly (`hbrep cluster stop`) on SIGTERM.
#   spark-master | spark-worker MASTER_URL
#                               a Spark standalone master / worker from the pyspark the image ships.
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
  airflow-init)
    airflow db migrate
    exec airflow connections list >/dev/null
    ;;
  *)
    exec "$@"
    ;;
esac
