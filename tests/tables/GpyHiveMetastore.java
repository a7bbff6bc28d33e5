import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;

/**
 * Hive's metastore thrift service (tests/tables/metastore.py starts it from the jars pyspark ships). With
 * -Dgpy.prepare.transactions=true it first makes the transaction and lock tables in a new Derby database, as
 * Hive's own TxnDbUtil does (pyiceberg's Hive catalog takes locks); in the same JVM, so one JVM start serves both.
 */
public class GpyHiveMetastore {
  public static void main(String[] args) throws Throwable {
    if (Boolean.getBoolean("gpy.prepare.transactions")) {
      TxnDbUtil.prepDb(new HiveConf());
    }
    HiveMetaStore.main(args);
  }
}
