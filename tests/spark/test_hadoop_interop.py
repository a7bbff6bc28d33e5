"""Interop with real Hadoop: the SequenceFile classes that ship inside pyspark, driven through its JVM."""


import pytest

from gobblin_py.store import FsDatasetStateStore
from gobblin_py.store.hadoop_io import DataInput, encode_text
from gobblin_py.store.sequencefile import Compression, SequenceFileReader, SequenceFileWriter

pytestmark = pytest.mark.spark

N_RECORDS = 2_000  # ~3 MB: several BLOCK blocks (1 MB each) and many syncs in NONE/RECORD files


def hadoop_write_text_file(spark, path, compression, records):
    """Write Text/Text records with Hadoop's own SequenceFile.Writer."""
    jvm = spark._jvm
    gateway = spark.sparkContext._gateway
    conf = spark._jsc.hadoopConfiguration()
    writer_cls = jvm.org.apache.hadoop.io.SequenceFile.Writer
    text_cls = jvm.java.lang.Class.forName("org.apache.hadoop.io.Text")
    codec = jvm.org.apache.hadoop.util.ReflectionUtils.newInstance(
        jvm.java.lang.Class.forName("org.apache.hadoop.io.compress.DefaultCodec"), conf
    )
    kind = getattr(jvm.org.apache.hadoop.io.SequenceFile.CompressionType, compression)
    options = gateway.new_array(jvm.org.apache.hadoop.io.SequenceFile.Writer.Option, 4)
    options[0] = writer_cls.file(jvm.org.apache.hadoop.fs.Path(path))
    options[1] = writer_cls.keyClass(text_cls)
    options[2] = writer_cls.valueClass(text_cls)
    options[3] = writer_cls.compression(kind, codec)
    writer = jvm.org.apache.hadoop.io.SequenceFile.createWriter(conf, options)
    key, value = jvm.org.apache.hadoop.io.Text(), jvm.org.apache.hadoop.io.Text()
    for k, v in records:
        key.set(k)
        value.set(v)
        writer.append(key, value)
    writer.close()


def records(n):
    return [(f"key-{i:06d}-ü", f"value {i} " + "xyz" * (i % 1000)) for i in range(n)]


@pytest.mark.parametrize("compression", ["NONE", "RECORD", "BLOCK"])
def test_our_reader_reads_files_hadoop_wrote(spark, tmp_path, compression):
    path = str(tmp_path / f"hadoop-{compression}.seq")
    expected = records(N_RECORDS)
    hadoop_write_text_file(spark, path, compression, expected)
    with open(path, "rb") as stream:
        reader = SequenceFileReader(stream, path)
        assert reader.header.compression is Compression[compression]
        assert reader.header.key_class == "org.apache.hadoop.io.Text"
        got = [(DataInput(k).read_text(), DataInput(v).read_text()) for k, v in reader]
    assert got == expected


@pytest.mark.parametrize("compression", list(Compression))
def test_hadoop_reads_files_our_writer_wrote(spark, tmp_path, compression):
    path = tmp_path / f"ours-{compression.value}.seq"
    expected = records(N_RECORDS)
    with open(path, "wb") as out, SequenceFileWriter(out, compression=compression) as writer:
        for k, v in expected:
            writer.append(encode_text(k), encode_text(v))
    got = spark.sparkContext.sequenceFile(
        f"file://{path}", "org.apache.hadoop.io.Text", "org.apache.hadoop.io.Text"
    ).collect()
    assert sorted(got) == sorted(expected)
    assert len(got) == N_RECORDS


def test_hadoop_reader_accepts_our_dataset_state_files(spark, tmp_path, sample_store_module):
    """Hadoop's SequenceFile.Reader opens a gpy .jst and yields the same raw key and value bytes."""
    store: FsDatasetStateStore = sample_store_module.build(str(tmp_path))
    path = tmp_path / "SampleOrdersPull" / "orders_db.public.orders-current.jst"
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    # Hadoop's reader insists on loading the value class; Gobblin's is not on Spark's classpath, so stand in a
    # raw-bytes Writable for it: nextRaw() below never deserialises the value anyway.
    jvm.org.apache.hadoop.io.WritableName.addName(
        jvm.java.lang.Class.forName("org.apache.hadoop.io.BytesWritable"), "org.apache.gobblin.runtime.JobState$DatasetState"
    )
    options = spark.sparkContext._gateway.new_array(jvm.org.apache.hadoop.io.SequenceFile.Reader.Option, 1)
    options[0] = jvm.org.apache.hadoop.io.SequenceFile.Reader.file(jvm.org.apache.hadoop.fs.Path(f"file://{path}"))
    reader = jvm.org.apache.hadoop.io.SequenceFile.Reader(conf, options)
    assert reader.getValueClassName() == "org.apache.gobblin.runtime.JobState$DatasetState"
    assert reader.isBlockCompressed() and reader.getCompressionCodec().getClass().getName().endswith("DefaultCodec")
    key_buffer = jvm.org.apache.hadoop.io.DataOutputBuffer()
    raw_value = reader.createValueBytes()
    value_buffer = jvm.org.apache.hadoop.io.DataOutputBuffer()
    assert reader.nextRaw(key_buffer, raw_value) > 0
    raw_value.writeUncompressedBytes(value_buffer)
    java_key = bytes(key_buffer.getData())[: key_buffer.getLength()]
    java_value = bytes(value_buffer.getData())[: value_buffer.getLength()]
    assert reader.nextRaw(key_buffer, raw_value) == -1  # one record, then a clean end of file
    reader.close()
    with open(path, "rb") as stream:
        [(our_key, our_value)] = list(SequenceFileReader(stream))
    assert (java_key, java_value) == (our_key, our_value)
    assert DataInput(java_key).read_text() == "orders_db:public.orders"
    assert store.get_latest_dataset_state("SampleOrdersPull", "orders_db:public.orders").task_count == 2
