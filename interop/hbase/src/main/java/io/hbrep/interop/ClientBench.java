package io.hbrep.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * HBase's own Java client on one table, for hbrep's client benchmark (bench/hbase_client.py): the same
 * operations hbrep's HBase RPC client and happybase run, timed inside the JVM (its start not counted).
 *
 * <pre>
 * ClientBench TABLE PREFIX PUTS BATCH_ROWS GETS READ_ROWS VALUE_SIZE
 *   PUTS single Puts of rows PREFIX-%08d (one cell f:q), then BATCH_ROWS rows PREFIX-b%08d in Table.put(List)
 *   batches of 500, then GETS Gets of random rows row%08d below READ_ROWS, then one Scan of [row, rox)
 *   (caching 1000); prints {"put_s", "batch_s", "get_s", "scan_s", "scanned", "found"} as JSON
 * </pre>
 */
public final class ClientBench {
  private ClientBench() {}

  public static void main(String[] args) throws Exception {
    TableName name = TableName.valueOf(args[0]);
    String prefix = args[1];
    int puts = Integer.parseInt(args[2]);
    int batchRows = Integer.parseInt(args[3]);
    int gets = Integer.parseInt(args[4]);
    int readRows = Integer.parseInt(args[5]);
    byte[] value = new byte[Integer.parseInt(args[6])];
    java.util.Arrays.fill(value, (byte) 'v');
    byte[] family = Bytes.toBytes("f");
    byte[] qualifier = Bytes.toBytes("q");
    Configuration conf = HBaseConfiguration.create();
    try (Connection connection = ConnectionFactory.createConnection(conf);
        Table table = connection.getTable(name)) {
      table.get(new Get(Bytes.toBytes("row00000000"))); // locate the region before the clock starts
      long start = System.nanoTime();
      for (int i = 0; i < puts; i++) {
        table.put(new Put(Bytes.toBytes(String.format("%s-%08d", prefix, i))).addColumn(family, qualifier, value));
      }
      double putS = (System.nanoTime() - start) / 1e9;
      start = System.nanoTime();
      List<Put> batch = new ArrayList<>();
      for (int i = 0; i < batchRows; i++) {
        batch.add(new Put(Bytes.toBytes(String.format("%s-b%08d", prefix, i))).addColumn(family, qualifier, value));
        if (batch.size() == 500 || i == batchRows - 1) {
          table.put(batch);
          batch = new ArrayList<>();
        }
      }
      double batchS = (System.nanoTime() - start) / 1e9;
      Random random = new Random(42);
      int found = 0;
      start = System.nanoTime();
      for (int i = 0; i < gets; i++) {
        Result result = table.get(new Get(Bytes.toBytes(String.format("row%08d", random.nextInt(readRows)))));
        if (!result.isEmpty()) {
          found++;
        }
      }
      double getS = (System.nanoTime() - start) / 1e9;
      long scanned = 0;
      start = System.nanoTime();
      Scan scan = new Scan().withStartRow(Bytes.toBytes("row")).withStopRow(Bytes.toBytes("rox")).setCaching(1000);
      try (ResultScanner scanner = table.getScanner(scan)) {
        for (Result result : scanner) {
          scanned++;
        }
      }
      double scanS = (System.nanoTime() - start) / 1e9;
      System.out.printf(
          "{\"put_s\": %f, \"batch_s\": %f, \"get_s\": %f, \"scan_s\": %f, \"scanned\": %d, \"found\": %d}%n",
          putS, batchS, getS, scanS, scanned, found);
    }
    System.exit(0);
  }
}
