package io.hbrep.interop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.regionserver.HStoreFile;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Writes one HFile with HBase's own HFile writer, for HBase's bulk-load tool (BulkLoadHFilesTool) to load.
 *
 * <p>{@code HFileTool write DIR FAMILIES ROWS PREFIX TS} writes, for each FAMILY of the comma-separated
 * FAMILIES, {@code DIR/FAMILY/hfile-FAMILY}: rows
 * {@code PREFIX-000000} .. {@code PREFIX-<ROWS-1>}, one cell each ({@code FAMILY:q} at timestamp TS, value
 * {@code PREFIX-FAMILY-i}), in key order, and prints {"files": N, "cells": N * ROWS}. DIR is a Hadoop path
 * or URI ({@code file:///...} for the local file system).
 */
public final class HFileTool {
  private HFileTool() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 6 || !args[0].equals("write")) {
      System.err.println("usage: HFileTool write DIR FAMILIES ROWS PREFIX TS");
      System.exit(2);
    }
    Configuration conf = HBaseConfiguration.create();
    Path dir = new Path(args[1]);
    String[] families = args[2].split(",");
    int rows = Integer.parseInt(args[3]);
    String prefix = args[4];
    long ts = Long.parseLong(args[5]);
    FileSystem fs = dir.getFileSystem(conf);
    for (String familyName : families) {
      write(conf, fs, new Path(new Path(dir, familyName), "hfile-" + familyName), familyName, rows, prefix, ts);
    }
    System.out.println("{\"files\": " + families.length + ", \"cells\": " + (long) families.length * rows + "}");
  }

  private static void write(Configuration conf, FileSystem fs, Path file, String familyName, int rows, String prefix,
      long ts) throws Exception {
    byte[] family = Bytes.toBytes(familyName);
    byte[] qualifier = Bytes.toBytes("q");
    HFileContext context = new HFileContextBuilder().withBlockSize(64 * 1024).build();
    try (HFile.Writer writer =
        HFile.getWriterFactory(conf, new CacheConfig(conf)).withPath(fs, file).withFileContext(context).create()) {
      for (int i = 0; i < rows; i++) {
        byte[] row = Bytes.toBytes(String.format("%s-%06d", prefix, i));
        writer.append(new KeyValue(row, family, qualifier, ts, Bytes.toBytes(prefix + "-" + familyName + "-" + i)));
      }
      writer.appendFileInfo(HStoreFile.BULKLOAD_TIME_KEY, Bytes.toBytes(System.currentTimeMillis()));
    }
  }
}
