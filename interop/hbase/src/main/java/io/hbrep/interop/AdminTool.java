package io.hbrep.interop;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.PrivateCellUtil;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.SnapshotDescription;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.client.replication.ReplicationPeerConfigUtil;
import org.apache.hadoop.hbase.replication.ReplicationPeerConfig;
import org.apache.hadoop.hbase.replication.ReplicationPeerConfigBuilder;
import org.apache.hadoop.hbase.replication.ReplicationPeerDescription;
import org.apache.hadoop.hbase.replication.ReplicationQueueStorage;
import org.apache.hadoop.hbase.replication.ReplicationStorageFactory;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.wal.WAL;
import org.apache.hadoop.hbase.wal.WALFactory;
import org.apache.hadoop.hbase.wal.WALKeyImpl;
import org.apache.hadoop.hbase.wal.WALStreamReader;
import org.apache.hadoop.hbase.zookeeper.ZKWatcher;
import org.apache.hbase.thirdparty.com.google.gson.Gson;
import org.apache.hbase.thirdparty.com.google.gson.GsonBuilder;
import org.apache.hbase.thirdparty.com.google.gson.JsonArray;
import org.apache.hbase.thirdparty.com.google.gson.JsonElement;
import org.apache.hbase.thirdparty.com.google.gson.JsonObject;
import org.apache.hbase.thirdparty.com.google.gson.JsonParser;

/**
 * HBase's own Admin API, driven from the command line with JSON in and out, for hbrep's interop tests
 * and for `hbrep add_peer --shadow` (a real HBase learns about peers only through its master) (the hbase
 * shell is not published for the -hadoop3 builds). The configuration is the hbase-site.xml
 * on the classpath. One command per run; any failure prints one line on stderr and exits 1.
 *
 * <pre>
 * peers                          every peer: id, state and its whole ReplicationPeerConfig
 * add-peer JSON                  add a peer: id, cluster_key, enabled, and the fields of a `peers` element's
 *                                config at the top level (replicate_all, table_cfs, ..., configuration,
 *                                peer_data as strings)
 * enable-peer ID | disable-peer ID | remove-peer ID
 * queues                         the replication queues as HBase's ReplicationQueueStorage reads them
 * servers                        the live region servers
 * wait-ready SECONDS             wait until the master is initialized and every region is online
 * create-table NAME VERSIONS FAMILY:SCOPE[:VERSIONS]... [split=ROW,ROW...]
 * table-exists NAME               {"table": NAME, "exists": true|false}
 * rows TABLE                     every row of TABLE (a Scan through HBase's client): {row: {"family:qualifier": value}}
 * snapshot TABLE NAME             take snapshot NAME of TABLE (Admin.snapshot), kept when it exists already
 * restore-snapshot NAME TABLE     make TABLE the snapshot's: cloneSnapshot when TABLE is missing, else
 *                                disable, restoreSnapshot, enable; prints {"table", "action": cloned|restored}
 * delete-snapshot NAME            delete snapshot NAME when it exists
 * mutate TABLE                   JSON lines on stdin: puts and every kind of delete, one per line
 * roll                           roll the WAL of every live region server
 * flush TABLE
 * hold-open SRC DST BYTES        a real HDFS writer holding a file open: copy the first BYTES of SRC into a new
 *                                file DST (the first 4 with an hflush of their own, so the NameNode's length
 *                                stays 4, then the rest with an hflush), print {"written": BYTES}, keep DST
 *                                open until stdin closes, then close it and print {"closed": DST}
 * locate TABLE                   each region of TABLE (encoded name) and the server holding it
 * split TABLE ROW                split the region of TABLE holding ROW at ROW (Admin.splitRegionAsync), wait
 *                                until the procedure is done; prints the table's regions (encoded names)
 * merge TABLE ROW_A ROW_B        merge the two adjacent regions holding ROW_A and ROW_B (Admin.mergeRegionsAsync),
 *                                wait; prints {"parents": [...], "regions": [...]} (encoded names)
 * reopen TABLE                   close and open again every region of TABLE (Admin.unassign, Admin.assign)
 * wal [--count] FILE...          per file (a JSON array), every entry of the WAL through HBase's own WALStreamReader, up to its
 *                                last whole entry (a WAL still being written ends in a partial one); with
 *                                --count only the numbers and the seconds the reading took
 * serve                          many commands in this one JVM (see {@link #serve}): what a test calls
 *                                hundreds of times then costs no JVM start and class loading each
 * </pre>
 */
public final class AdminTool {
  private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();

  private AdminTool() {}

  public static void main(String[] args) {
    if (args.length == 0) {
      System.err.println("usage: AdminTool COMMAND [ARGS] (see the class comment)");
      System.exit(2);
    }
    if (args[0].equals("serve")) {
      try {
        serve();
      } catch (Exception e) {
        System.err.println("AdminTool serve: " + e);
        System.exit(1);
      }
      System.exit(0);
    }
    Configuration conf = HBaseConfiguration.create();
    if (args[0].equals("wal") || args[0].equals("hold-open")) { // files only: no cluster needed
      try {
        System.out.println(GSON.toJson(run(conf, null, null, args)));
      } catch (Exception e) {
        System.err.println("AdminTool wal: " + e);
        System.exit(1);
      }
      System.exit(0);
    }
    try (Connection connection = ConnectionFactory.createConnection(conf);
        Admin admin = connection.getAdmin()) {
      System.out.println(GSON.toJson(run(conf, connection, admin, args)));
    } catch (Exception e) {
      System.err.println("AdminTool " + args[0] + ": " + e);
      System.exit(1);
    }
    System.exit(0);
  }

  private static JsonElement holdOpen(Configuration conf, Path src, Path dst, int bytes) throws Exception {
    byte[] data = new byte[bytes];
    try (FSDataInputStream input = src.getFileSystem(conf).open(src)) {
      input.readFully(0, data);
    }
    int first = Math.min(4, bytes);
    try (FSDataOutputStream output = dst.getFileSystem(conf).create(dst, false)) {
      output.write(data, 0, first);
      output.hflush(); // the first hflush of a block records its length on the NameNode; later ones do not
      output.write(data, first, bytes - first);
      output.hflush();
      JsonObject written = new JsonObject();
      written.addProperty("written", bytes);
      System.out.println(GSON.toJson(written));
      System.out.flush();
      while (System.in.read() != -1) {
        // held open until stdin closes
      }
    }
    JsonObject closed = new JsonObject();
    closed.addProperty("closed", dst.toString());
    return closed;
  }

  private static JsonElement split(Admin admin, TableName table, byte[] row) throws Exception {
    RegionInfo parent = null;
    for (RegionInfo region : admin.getRegions(table)) {
      if (region.containsRow(row)) {
        parent = region;
      }
    }
    if (parent == null) {
      throw new IllegalArgumentException("no region of " + table + " holds row " + Bytes.toStringBinary(row));
    }
    admin.splitRegionAsync(parent.getRegionName(), row).get(180, TimeUnit.SECONDS);
    JsonArray regions = new JsonArray();
    for (RegionInfo region : admin.getRegions(table)) {
      regions.add(region.getEncodedName());
    }
    JsonObject out = new JsonObject();
    out.addProperty("parent", parent.getEncodedName());
    out.add("regions", regions);
    return out;
  }

  private static JsonElement run(Configuration conf, Connection connection, Admin admin, String[] args)
      throws Exception {
    return run(conf, connection, admin, args, System.in);
  }

  /**
   * One command per JSON line on stdin, {"args": [COMMAND, ARGS...], "stdin": TEXT or absent (what
   * `mutate` reads)}, one answer per line on stdout, {"ok": true, "out": ANSWER} or {"ok": false,
   * "error": "AdminTool COMMAND: ..."}, until stdin ends. Each command runs as in a run of its own: a
   * Configuration read again from the classpath's hbase-site.xml and a Connection of its own, closed after
   * it, so a cluster restarted between two commands is found as a new process would find it. Anything
   * else printed on stdout (a library's output) goes to stderr, never into the answers. `hold-open`
   * (which holds a file until its stdin closes) runs only in a process of its own.
   */
  private static void serve() throws Exception {
    PrintStream answers = System.out;
    System.setOut(System.err);
    BufferedReader requests = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = requests.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      JsonObject request = JsonParser.parseString(line).getAsJsonObject();
      JsonArray given = request.getAsJsonArray("args");
      String[] args = new String[given.size()];
      for (int i = 0; i < args.length; i++) {
        args[i] = given.get(i).getAsString();
      }
      JsonElement text = request.get("stdin");
      byte[] input = text == null || text.isJsonNull() ? new byte[0]
          : text.getAsString().getBytes(StandardCharsets.UTF_8);
      JsonObject answer = new JsonObject();
      try {
        answer.add("out", once(args, new ByteArrayInputStream(input)));
        answer.addProperty("ok", true);
      } catch (Exception e) {
        answer.addProperty("ok", false);
        answer.addProperty("error", "AdminTool " + (args.length > 0 ? args[0] : "") + ": " + e);
      }
      answers.println(GSON.toJson(answer));
      answers.flush();
    }
  }

  /** One command of {@link #serve}, with its own Configuration and (unless it reads files only) Connection. */
  private static JsonElement once(String[] args, InputStream input) throws Exception {
    if (args.length == 0) {
      throw new IllegalArgumentException("no command");
    }
    if (args[0].equals("hold-open") || args[0].equals("serve")) {
      throw new IllegalArgumentException(args[0] + " runs only in a process of its own");
    }
    Configuration conf = HBaseConfiguration.create();
    if (args[0].equals("wal")) {
      return run(conf, null, null, args, input);
    }
    try (Connection connection = ConnectionFactory.createConnection(conf);
        Admin admin = connection.getAdmin()) {
      return run(conf, connection, admin, args, input);
    }
  }

  private static JsonElement run(
      Configuration conf, Connection connection, Admin admin, String[] args, InputStream input)
      throws Exception {
    switch (args[0]) {
      case "peers":
        return peers(admin);
      case "add-peer": {
        JsonObject peer = JsonParser.parseString(args[1]).getAsJsonObject();
        boolean enabled = !peer.has("enabled") || peer.get("enabled").getAsBoolean();
        admin.addReplicationPeer(peer.get("id").getAsString(), peerConfig(peer), enabled);
        return peers(admin);
      }
      case "enable-peer":
        admin.enableReplicationPeer(args[1]);
        return peers(admin);
      case "disable-peer":
        admin.disableReplicationPeer(args[1]);
        return peers(admin);
      case "remove-peer":
        admin.removeReplicationPeer(args[1]);
        return peers(admin);
      case "queues":
        return queues(conf);
      case "servers": {
        JsonArray out = new JsonArray();
        for (ServerName sn : admin.getRegionServers()) {
          out.add(sn.getServerName());
        }
        return out;
      }
      case "wait-ready":
        return waitReady(admin, Long.parseLong(args[1]));
      case "create-table":
        return createTable(admin, args);
      case "rows": {
        JsonObject out = new JsonObject();
        try (Table table = connection.getTable(TableName.valueOf(args[1]));
            org.apache.hadoop.hbase.client.ResultScanner scanner =
                table.getScanner(new org.apache.hadoop.hbase.client.Scan())) {
          for (org.apache.hadoop.hbase.client.Result result : scanner) {
            JsonObject cells = new JsonObject();
            for (Cell cell : result.rawCells()) {
              cells.addProperty(Bytes.toString(CellUtil.cloneFamily(cell)) + ":"
                  + Bytes.toString(CellUtil.cloneQualifier(cell)), Bytes.toString(CellUtil.cloneValue(cell)));
            }
            out.add(Bytes.toString(result.getRow()), cells);
          }
        }
        return out;
      }
      case "table-exists": {
        JsonObject out = new JsonObject();
        out.addProperty("table", args[1]);
        out.addProperty("exists", admin.tableExists(TableName.valueOf(args[1])));
        return out;
      }
      case "snapshot":
        return snapshot(admin, TableName.valueOf(args[1]), args[2]);
      case "restore-snapshot":
        return restoreSnapshot(admin, args[1], TableName.valueOf(args[2]));
      case "delete-snapshot": {
        JsonObject out = new JsonObject();
        boolean exists = hasSnapshot(admin, args[1]);
        if (exists) {
          admin.deleteSnapshot(args[1]);
        }
        out.addProperty("deleted", exists);
        return out;
      }
      case "mutate":
        return mutate(connection, TableName.valueOf(args[1]), input);
      case "roll": {
        JsonArray out = new JsonArray();
        for (ServerName sn : admin.getRegionServers()) {
          admin.rollWALWriter(sn);
          out.add(sn.getServerName());
        }
        return out;
      }
      case "wal": {
        boolean countOnly = args[1].equals("--count");
        JsonArray out = new JsonArray();
        for (int i = countOnly ? 2 : 1; i < args.length; i++) {
          out.add(wal(conf, args[i], countOnly));
        }
        return out;
      }
      case "flush":
        admin.flush(TableName.valueOf(args[1]));
        return new JsonObject();
      case "hold-open":
        return holdOpen(conf, new Path(args[1]), new Path(args[2]), Integer.parseInt(args[3]));
      case "split":
        return split(admin, TableName.valueOf(args[1]), Bytes.toBytes(args[2]));
      case "move":
        return move(admin, connection, TableName.valueOf(args[1]));
      case "reopen":
        return reopen(admin, TableName.valueOf(args[1]));
      case "merge":
        return merge(admin, TableName.valueOf(args[1]), Bytes.toBytes(args[2]), Bytes.toBytes(args[3]));
      case "locate": {
        JsonObject located = new JsonObject();
        try (RegionLocator locator = connection.getRegionLocator(TableName.valueOf(args[1]))) {
          for (HRegionLocation location : locator.getAllRegionLocations()) {
            located.addProperty(location.getRegion().getEncodedName(), location.getServerName().getServerName());
          }
        }
        return located;
      }
      default:
        throw new IllegalArgumentException("unknown command " + args[0]);
    }
  }

  /** Closes and opens again every region of the table (what a move does; with one server, on the same one). */
  private static JsonObject reopen(Admin admin, TableName table) throws Exception {
    JsonObject reopened = new JsonObject();
    for (RegionInfo region : admin.getRegions(table)) {
      admin.unassign(region.getRegionName());
      admin.assign(region.getRegionName());
      reopened.addProperty(region.getEncodedName(), "reopened");
    }
    return reopened;
  }

  /** Merges the two regions holding rowA and rowB (adjacent regions), waiting for the merge. */
  private static JsonElement merge(Admin admin, TableName table, byte[] rowA, byte[] rowB) throws Exception {
    RegionInfo a = null;
    RegionInfo b = null;
    for (RegionInfo region : admin.getRegions(table)) {
      if (region.containsRow(rowA)) {
        a = region;
      }
      if (region.containsRow(rowB)) {
        b = region;
      }
    }
    if (a == null || b == null || a.equals(b)) {
      throw new IllegalArgumentException("rows " + Bytes.toStringBinary(rowA) + " and "
          + Bytes.toStringBinary(rowB) + " of " + table + " are not in two regions");
    }
    admin.mergeRegionsAsync(new byte[][] { a.getEncodedNameAsBytes(), b.getEncodedNameAsBytes() }, false)
        .get(180, TimeUnit.SECONDS);
    JsonArray regions = new JsonArray();
    for (RegionInfo region : admin.getRegions(table)) {
      regions.add(region.getEncodedName());
    }
    JsonObject out = new JsonObject();
    JsonArray parents = new JsonArray();
    parents.add(a.getEncodedName());
    parents.add(b.getEncodedName());
    out.add("parents", parents);
    out.add("regions", regions);
    return out;
  }

  /** Moves every region of the table to another live region server (Admin.move, which waits for the
   * master's move procedure); answers each region's encoded name with the server it is on now. */
  private static JsonObject move(Admin admin, Connection connection, TableName table) throws Exception {
    List<ServerName> servers = new ArrayList<>(admin.getRegionServers());
    JsonObject moved = new JsonObject();
    try (RegionLocator locator = connection.getRegionLocator(table)) {
      for (HRegionLocation location : locator.getAllRegionLocations()) {
        ServerName from = location.getServerName();
        ServerName to = servers.stream().filter(s -> !s.equals(from)).findFirst()
            .orElseThrow(() -> new IllegalStateException("AdminTool move: no other live region server"));
        admin.move(location.getRegion().getEncodedNameAsBytes(), to);
        moved.addProperty(location.getRegion().getEncodedName(), to.getServerName());
      }
    }
    return moved;
  }

  /** Polls until the master answers a namespace listing (initialized) and no region is in transition. */
  private static JsonObject waitReady(Admin admin, long seconds) throws Exception {
    long deadline = System.currentTimeMillis() + seconds * 1000;
    Exception last = null;
    while (System.currentTimeMillis() < deadline) {
      try {
        admin.listNamespaceDescriptors();
        if (admin.getClusterMetrics().getRegionStatesInTransition().isEmpty()
            && admin.isTableAvailable(TableName.META_TABLE_NAME)) {
          JsonObject out = new JsonObject();
          out.addProperty("master", admin.getClusterMetrics().getMasterName().getServerName());
          out.addProperty("region_servers", admin.getRegionServers().size());
          return out;
        }
      } catch (Exception e) {
        last = e;
      }
      Thread.sleep(300);
    }
    throw new IllegalStateException("master not initialized within " + seconds + "s: " + last);
  }

  /** Every peer as {id, enabled, is_enabled, config}: listReplicationPeers, isReplicationPeerEnabled, getReplicationPeerConfig. */
  private static JsonArray peers(Admin admin) throws Exception {
    JsonArray out = new JsonArray();
    for (ReplicationPeerDescription d : admin.listReplicationPeers()) {
      JsonObject peer = new JsonObject();
      peer.addProperty("id", d.getPeerId());
      peer.addProperty("enabled", d.isEnabled());
      peer.addProperty("is_enabled", admin.isReplicationPeerEnabled(d.getPeerId()));
      peer.add("listed_config", configJson(d.getPeerConfig()));
      peer.add("config", configJson(admin.getReplicationPeerConfig(d.getPeerId())));
      peer.add("shell_row", shellRow(d));
      out.add(peer);
    }
    return out;
  }

  /**
   * The row the HBase shell's list_peers prints (list_peers.rb, replication_admin.rb): the exclude
   * lists when REPLICATE_ALL, namespaces sorted and joined by ';', TABLE_CFS by HBase's own
   * ReplicationPeerConfigUtil.convertToString (given the tables sorted by name: the shell passes a
   * HashMap, whose order means nothing).
   */
  private static JsonObject shellRow(ReplicationPeerDescription d) {
    ReplicationPeerConfig c = d.getPeerConfig();
    boolean all = c.replicateAllUserTables();
    Set<String> namespaces = all ? c.getExcludeNamespaces() : c.getNamespaces();
    Map<TableName, List<String>> tableCfs = all ? c.getExcludeTableCFsMap() : c.getTableCFsMap();
    JsonObject row = new JsonObject();
    row.addProperty("PEER_ID", d.getPeerId());
    row.addProperty("CLUSTER_KEY", c.getClusterKey());
    row.addProperty("ENDPOINT_CLASSNAME", c.getReplicationEndpointImpl() == null ? "" : c.getReplicationEndpointImpl());
    row.addProperty("STATE", d.isEnabled() ? "ENABLED" : "DISABLED");
    row.addProperty("REPLICATE_ALL", Boolean.toString(all));
    row.addProperty("NAMESPACES", namespaces == null ? "" : String.join(";", new java.util.TreeSet<>(namespaces)));
    Map<TableName, List<String>> byName = new java.util.LinkedHashMap<>();
    if (tableCfs != null) { // TableName.compareTo orders by hash code first: sort by the name instead
      tableCfs.keySet().stream().sorted(java.util.Comparator.comparing(TableName::getNameAsString))
          .forEach(t -> byName.put(t, tableCfs.get(t)));
    }
    row.addProperty("TABLE_CFS", ReplicationPeerConfigUtil.convertToString(byName));
    row.addProperty("BANDWIDTH", c.getBandwidth());
    row.addProperty("SERIAL", Boolean.toString(c.isSerial()));
    return row;
  }

  private static JsonObject configJson(ReplicationPeerConfig c) {
    JsonObject o = new JsonObject();
    o.addProperty("cluster_key", c.getClusterKey());
    o.addProperty("endpoint", c.getReplicationEndpointImpl());
    o.addProperty("replicate_all", c.replicateAllUserTables());
    o.add("table_cfs", tableCfsJson(c.getTableCFsMap()));
    o.add("exclude_table_cfs", tableCfsJson(c.getExcludeTableCFsMap()));
    o.add("namespaces", setJson(c.getNamespaces()));
    o.add("exclude_namespaces", setJson(c.getExcludeNamespaces()));
    o.addProperty("bandwidth", c.getBandwidth());
    o.addProperty("serial", c.isSerial());
    o.add("configuration", GSON.toJsonTree(new TreeMap<>(c.getConfiguration())));
    JsonObject data = new JsonObject();
    for (Map.Entry<byte[], byte[]> e : c.getPeerData().entrySet()) {
      data.addProperty(Bytes.toStringBinary(e.getKey()), Bytes.toStringBinary(e.getValue()));
    }
    o.add("peer_data", data);
    return o;
  }

  private static JsonElement tableCfsJson(Map<TableName, List<String>> map) {
    if (map == null) {
      return null;
    }
    JsonObject o = new JsonObject();
    for (Map.Entry<TableName, List<String>> e : new TreeMap<>(map).entrySet()) {
      JsonArray cfs = new JsonArray();
      if (e.getValue() != null) {
        e.getValue().stream().sorted().forEach(cfs::add);
      }
      o.add(e.getKey().getNameAsString(), cfs);
    }
    return o;
  }

  private static JsonElement setJson(Set<String> set) {
    if (set == null) {
      return null;
    }
    JsonArray a = new JsonArray();
    set.stream().sorted().forEach(a::add);
    return a;
  }

  private static ReplicationPeerConfig peerConfig(JsonObject p) {
    ReplicationPeerConfigBuilder b = ReplicationPeerConfig.newBuilder();
    b.setClusterKey(p.get("cluster_key").getAsString());
    if (has(p, "replicate_all")) {
      b.setReplicateAllUserTables(p.get("replicate_all").getAsBoolean());
    }
    if (has(p, "table_cfs")) {
      b.setTableCFsMap(tableCfs(p.getAsJsonObject("table_cfs")));
    }
    if (has(p, "exclude_table_cfs")) {
      b.setExcludeTableCFsMap(tableCfs(p.getAsJsonObject("exclude_table_cfs")));
    }
    if (has(p, "namespaces")) {
      b.setNamespaces(stringSet(p.getAsJsonArray("namespaces")));
    }
    if (has(p, "exclude_namespaces")) {
      b.setExcludeNamespaces(stringSet(p.getAsJsonArray("exclude_namespaces")));
    }
    if (has(p, "bandwidth")) {
      b.setBandwidth(p.get("bandwidth").getAsLong());
    }
    if (has(p, "serial")) {
      b.setSerial(p.get("serial").getAsBoolean());
    }
    if (has(p, "configuration")) {
      for (Map.Entry<String, JsonElement> e : p.getAsJsonObject("configuration").entrySet()) {
        b.putConfiguration(e.getKey(), e.getValue().getAsString());
      }
    }
    if (has(p, "peer_data")) {
      for (Map.Entry<String, JsonElement> e : p.getAsJsonObject("peer_data").entrySet()) {
        b.putPeerData(Bytes.toBytes(e.getKey()), Bytes.toBytes(e.getValue().getAsString()));
      }
    }
    return b.build();
  }

  private static boolean has(JsonObject o, String key) {
    return o.has(key) && !o.get(key).isJsonNull();
  }

  private static Map<TableName, List<String>> tableCfs(JsonObject o) {
    Map<TableName, List<String>> map = new HashMap<>();
    for (Map.Entry<String, JsonElement> e : o.entrySet()) {
      List<String> cfs = new ArrayList<>();
      for (JsonElement cf : e.getValue().getAsJsonArray()) {
        cfs.add(cf.getAsString());
      }
      map.put(TableName.valueOf(e.getKey()), cfs.isEmpty() ? null : cfs);
    }
    return map;
  }

  private static Set<String> stringSet(JsonArray a) {
    Set<String> set = new HashSet<>();
    for (JsonElement e : a) {
      set.add(e.getAsString());
    }
    return set;
  }

  /** {server: {queueId: {wal: position}}} through HBase's ReplicationQueueStorage (ZooKeeper in 2.x). */
  private static JsonObject queues(Configuration conf) throws Exception {
    JsonObject out = new JsonObject();
    try (ZKWatcher zkw = new ZKWatcher(conf, "hbrep-interop", null)) {
      ReplicationQueueStorage storage = ReplicationStorageFactory.getReplicationQueueStorage(zkw, conf);
      for (ServerName server : storage.getListOfReplicators()) {
        JsonObject queues = new JsonObject();
        for (String queueId : storage.getAllQueues(server)) {
          JsonObject wals = new JsonObject();
          for (String wal : storage.getWALsInQueue(server, queueId)) {
            wals.addProperty(wal, storage.getWALPosition(server, queueId, wal));
          }
          queues.add(queueId, wals);
        }
        out.add(server.getServerName(), queues);
      }
    }
    return out;
  }

  private static JsonObject wal(Configuration conf, String file, boolean countOnly) throws Exception {
    Path path = new Path(file);
    FileSystem fs = path.getFileSystem(conf);
    JsonArray entries = new JsonArray();
    long nEntries = 0;
    long nCells = 0;
    boolean eofInEntry = false;
    long position = 0;
    long started = System.nanoTime();
    try (WALStreamReader reader = WALFactory.createStreamReader(fs, path, conf)) {
      position = reader.getPosition();
      while (true) {
        WAL.Entry entry;
        try {
          entry = reader.next();
        } catch (EOFException e) {
          eofInEntry = true; // what WALEntryStream does: wait for the rest of a WAL being written
          break;
        }
        if (entry == null) {
          break;
        }
        nEntries++;
        nCells += entry.getEdit().getCells().size();
        long start = position;
        position = reader.getPosition();
        if (!countOnly) {
          entries.add(entryJson(entry, start, position));
        }
      }
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    JsonObject out = new JsonObject();
    out.addProperty("file", file);
    out.addProperty("entries", nEntries);
    out.addProperty("cells", nCells);
    out.addProperty("position", position);
    out.addProperty("file_length", fs.getFileStatus(path).getLen());
    out.addProperty("eof_in_entry", eofInEntry);
    out.addProperty("seconds", seconds);
    if (!countOnly) {
      out.add("items", entries);
    }
    return out;
  }

  private static JsonObject entryJson(WAL.Entry entry, long start, long end) {
    WALKeyImpl key = entry.getKey();
    JsonObject o = new JsonObject();
    o.addProperty("table", key.getTableName().getNameAsString());
    o.addProperty("region", Bytes.toString(key.getEncodedRegionName()));
    o.addProperty("sequence", key.getSequenceId());
    o.addProperty("orig_sequence", key.getOrigLogSeqNum());
    o.addProperty("write_time", key.getWriteTime());
    o.addProperty("nonce_group", key.getNonceGroup());
    o.addProperty("nonce", key.getNonce());
    JsonArray clusterIds = new JsonArray();
    for (UUID id : key.getClusterIds()) {
      clusterIds.add(id.toString());
    }
    o.add("cluster_ids", clusterIds);
    JsonObject scopes = new JsonObject();
    if (key.getReplicationScopes() != null) {
      for (Map.Entry<byte[], Integer> e : key.getReplicationScopes().entrySet()) {
        scopes.addProperty(Bytes.toStringBinary(e.getKey()), e.getValue());
      }
    }
    o.add("scopes", scopes);
    JsonObject attributes = new JsonObject();
    for (Map.Entry<String, byte[]> e : new TreeMap<>(key.getExtendedAttributes()).entrySet()) {
      attributes.addProperty(e.getKey(), Bytes.toStringBinary(e.getValue()));
    }
    o.add("extended_attributes", attributes);
    o.addProperty("start", start);
    o.addProperty("end", end);
    JsonArray cells = new JsonArray();
    for (Cell cell : entry.getEdit().getCells()) {
      JsonObject c = new JsonObject();
      c.addProperty("row", Bytes.toStringBinary(CellUtil.cloneRow(cell)));
      c.addProperty("family", Bytes.toStringBinary(CellUtil.cloneFamily(cell)));
      c.addProperty("qualifier", Bytes.toStringBinary(CellUtil.cloneQualifier(cell)));
      c.addProperty("timestamp", cell.getTimestamp());
      c.addProperty("type", cell.getTypeByte() & 0xFF);
      c.addProperty("value", Bytes.toStringBinary(CellUtil.cloneValue(cell)));
      c.addProperty("tags", Bytes.toStringBinary(PrivateCellUtil.cloneTags(cell)));
      cells.add(c);
    }
    o.add("cells", cells);
    return o;
  }

  private static boolean hasSnapshot(Admin admin, String name) throws Exception {
    for (SnapshotDescription snapshot : admin.listSnapshots()) {
      if (snapshot.getName().equals(name)) {
        return true;
      }
    }
    return false;
  }

  private static JsonObject snapshot(Admin admin, TableName table, String name) throws Exception {
    boolean taken = !hasSnapshot(admin, name);
    if (taken) {
      admin.snapshot(name, table);
    }
    JsonObject out = new JsonObject();
    out.addProperty("snapshot", name);
    out.addProperty("table", table.getNameAsString());
    out.addProperty("taken", taken);
    return out;
  }

  private static JsonObject restoreSnapshot(Admin admin, String name, TableName table) throws Exception {
    JsonObject out = new JsonObject();
    out.addProperty("table", table.getNameAsString());
    if (!admin.tableExists(table)) {
      admin.cloneSnapshot(name, table);
      out.addProperty("action", "cloned");
      return out;
    }
    if (admin.isTableEnabled(table)) {
      admin.disableTable(table);
    }
    try {
      admin.restoreSnapshot(name);
    } finally {
      admin.enableTable(table);
    }
    out.addProperty("action", "restored");
    return out;
  }

  private static JsonObject createTable(Admin admin, String[] args) throws Exception {
    TableName name = TableName.valueOf(args[1]);
    int versions = Integer.parseInt(args[2]);
    TableDescriptorBuilder table = TableDescriptorBuilder.newBuilder(name);
    byte[][] splits = null; // split=ROW,ROW...: regions from the start, as the shell's SPLITS => [...]
    // compression=ALGO: every family's store files compressed so (the shell's COMPRESSION => 'GZ')
    Compression.Algorithm compression = Compression.Algorithm.NONE;
    for (int i = 3; i < args.length; i++) {
      if (args[i].startsWith("compression=")) {
        compression = Compression.Algorithm.valueOf(args[i].substring("compression=".length()));
      }
    }
    for (int i = 3; i < args.length; i++) {
      if (args[i].startsWith("compression=")) {
        continue;
      }
      if (args[i].startsWith("split=")) {
        String[] rows = args[i].substring("split=".length()).split(",");
        splits = new byte[rows.length][];
        for (int r = 0; r < rows.length; r++) {
          splits[r] = Bytes.toBytes(rows[r]);
        }
        continue;
      }
      String[] familyScope = args[i].split(":"); // FAMILY:SCOPE[:VERSIONS]
      table.setColumnFamily(
          ColumnFamilyDescriptorBuilder.newBuilder(Bytes.toBytes(familyScope[0]))
              .setMaxVersions(familyScope.length > 2 ? Integer.parseInt(familyScope[2]) : versions)
              .setScope(Integer.parseInt(familyScope[1]))
              .setCompressionType(compression)
              .build());
    }
    if (splits == null) {
      admin.createTable(table.build());
    } else {
      admin.createTable(table.build(), splits);
    }
    JsonObject out = new JsonObject();
    out.addProperty("table", name.getNameAsString());
    return out;
  }

  /**
   * One mutation per JSON line, each applied on its own (so each is one WAL entry): {"op": "put",
   * "row", "family", "qualifier", "ts", "value"}, {"op": "delete_row", "row", "ts"?}, {"op":
   * "delete_family", "row", "family", "ts"?}, {"op": "delete_family_version", "row", "family", "ts"},
   * {"op": "delete_columns", "row", "family", "qualifier", "ts"?}, {"op": "delete_version", "row",
   * "family", "qualifier", "ts"}; "puts": [...] in a "multi_put" line puts several cells in one entry.
   */
  private static JsonObject mutate(Connection connection, TableName name, InputStream input) throws Exception {
    int applied = 0;
    try (Table table = connection.getTable(name);
        BufferedReader in = new BufferedReader(new InputStreamReader(input, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        JsonObject m = JsonParser.parseString(line).getAsJsonObject();
        Mutation mutation = mutation(m);
        if (mutation instanceof Put) {
          table.put((Put) mutation);
        } else {
          table.delete((Delete) mutation);
        }
        applied++;
      }
    }
    JsonObject out = new JsonObject();
    out.addProperty("applied", applied);
    return out;
  }

  private static Mutation mutation(JsonObject m) {
    String op = m.get("op").getAsString();
    byte[] row = Bytes.toBytes(m.get("row").getAsString());
    long ts = has(m, "ts") ? m.get("ts").getAsLong() : Long.MAX_VALUE;
    switch (op) {
      case "put": {
        Put put = new Put(row);
        addCell(put, m);
        if (has(m, "ttl")) {
          put.setTTL(m.get("ttl").getAsLong()); // written to the WAL as a TTL tag on each cell
        }
        return put;
      }
      case "multi_put": {
        Put put = new Put(row);
        for (JsonElement cell : m.getAsJsonArray("cells")) {
          addCell(put, cell.getAsJsonObject());
        }
        return put;
      }
      case "delete_row":
        return has(m, "ts") ? new Delete(row, ts) : new Delete(row);
      case "delete_family":
        return new Delete(row).addFamily(family(m), ts);
      case "delete_family_version":
        return new Delete(row).addFamilyVersion(family(m), ts);
      case "delete_columns":
        return new Delete(row).addColumns(family(m), qualifier(m), ts);
      case "delete_version":
        return has(m, "ts") ? new Delete(row).addColumn(family(m), qualifier(m), ts)
            : new Delete(row).addColumn(family(m), qualifier(m));
      default:
        throw new IllegalArgumentException("unknown op " + op);
    }
  }

  private static void addCell(Put put, JsonObject c) {
    byte[] value = has(c, "value_b64") ? Base64.getDecoder().decode(c.get("value_b64").getAsString())
        : Bytes.toBytes(c.get("value").getAsString());
    if (has(c, "ts")) {
      put.addColumn(family(c), qualifier(c), c.get("ts").getAsLong(), value);
    } else {
      put.addColumn(family(c), qualifier(c), value);
    }
  }

  private static byte[] family(JsonObject m) {
    return Bytes.toBytes(m.get("family").getAsString());
  }

  private static byte[] qualifier(JsonObject m) {
    return Bytes.toBytes(m.get("qualifier").getAsString());
  }
}
