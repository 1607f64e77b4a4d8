package org.lakecdc.io.mssqlcdc.chunk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/** Chunk bounds and extents as JSON (docs/scenarios.md C098, C106). */
class ChunkBoundsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SqlServerType INT = SqlServerType.of("int");
  private static final SqlServerType VARCHAR = SqlServerType.parse("varchar(10)");

  private static List<Object> key(Object... values) {
    return Arrays.asList(values);
  }

  private static String json(List<Object> key, List<SqlServerType> types) {
    return ChunkBounds.toJson(key, types).toString();
  }

  private static List<Object> back(String json, List<SqlServerType> types) throws Exception {
    return ChunkBounds.fromJson(JSON.readTree(json), types);
  }

  @Test
  void c106BoundsCrossJsonAsTextThatCastReadsBack() throws Exception {
    assertEquals("5", json(key(5), List.of(INT)));
    assertEquals("[null,\"n\"]", json(key(null, "n"), List.of(INT, VARCHAR)));
    LocalDateTime at = LocalDateTime.parse("2026-09-28T10:00:00.006667");
    List<SqlServerType> mixed =
        List.of(
            SqlServerType.of("datetime"),
            SqlServerType.parse("decimal(18,10)"),
            SqlServerType.parse("varbinary(4)"));
    assertEquals(
        "[\"2026-09-28T10:00:00.006\",\"0.0000000000\",\"0x0a0b\"]",
        json(key(at, new BigDecimal("0E-10"), new byte[] {10, 11}), mixed));
    assertEquals(
        "\"2026-09-28T10:00:00.006667\"",
        json(key(at.plusNanos(300)), List.of(SqlServerType.parse("datetime2(7)"))));
    assertEquals(NullNode.getInstance(), ChunkBounds.toJson(null, List.of(INT)));
    assertNull(back("null", List.of(INT)));
    assertEquals(key(5), back("5", List.of(INT)));
    assertEquals(key(1, "a"), back("[1,\"a\"]", List.of(INT, VARCHAR)));
    List<Object> m = back("[\"2026-09-28T10:00:00.006\",\"0.0000000000\",\"0x0a0b\"]", mixed);
    assertEquals(LocalDateTime.parse("2026-09-28T10:00:00.006"), m.get(0));
    assertEquals(new BigDecimal("0E-10"), m.get(1));
    assertArrayEquals(new byte[] {10, 11}, (byte[]) m.get(2));
  }

  @Test
  void c106EveryKeyTypeReadsBackInItsJavaType() throws Exception {
    List<SqlServerType> types =
        List.of(
            SqlServerType.of("tinyint"),
            SqlServerType.of("bigint"),
            SqlServerType.of("bit"),
            SqlServerType.of("float"),
            SqlServerType.of("date"),
            SqlServerType.parse("datetimeoffset(7)"),
            SqlServerType.of("uniqueidentifier"));
    List<Object> k =
        key(
            (short) 7,
            -3L,
            true,
            1.5d,
            LocalDate.parse("2026-09-28"),
            Instant.parse("2026-09-28T10:00:00.1234567Z"),
            "6F9619FF-8B86-D011-B42D-00C04FC964FF");
    String text = json(k, types);
    assertEquals(
        "[7,-3,true,1.5,\"2026-09-28\",\"2026-09-28T10:00:00.123456+00:00\","
            + "\"6F9619FF-8B86-D011-B42D-00C04FC964FF\"]",
        text);
    List<Object> read = back(text, types);
    assertEquals(
        key(
            (short) 7,
            -3L,
            true,
            1.5d,
            LocalDate.parse("2026-09-28"),
            Instant.parse("2026-09-28T10:00:00.123456Z"),
            "6F9619FF-8B86-D011-B42D-00C04FC964FF"),
        read);
  }

  @Test
  void c106AnIntegerBoundAboveTheTypesMaximumReadsAsOpen() throws Exception {
    assertNull(back("2147483648", List.of(INT)));
    assertNull(back("9223372036854775808", List.of(SqlServerType.of("bigint"))));
    assertEquals(key(2147483647), back("2147483647", List.of(INT)));
    assertEquals(
        "9223372036854775808",
        json(
            key(BigInteger.valueOf(Long.MAX_VALUE).add(BigInteger.ONE)),
            List.of(SqlServerType.of("bigint"))));
    IllegalArgumentException below =
        assertThrows(IllegalArgumentException.class, () -> back("-2147483649", List.of(INT)));
    assertEquals("A key bound value -2147483649 does not fit the key type int", below.getMessage());
    assertThrows(IllegalArgumentException.class, () -> back("\"5\"", List.of(INT)));
    assertThrows(IllegalArgumentException.class, () -> back("[1]", List.of(INT, VARCHAR)));
    assertThrows(IllegalArgumentException.class, () -> back("1", List.of(INT, VARCHAR)));
  }

  @Test
  void c106APlanIsIndexLoHiTriples() {
    List<SqlServerType> types = List.of(INT, VARCHAR);
    List<Chunk> plan = List.of(new Chunk(0, null, key(1, "a")), new Chunk(1, key(1, "a"), null));
    String json = ChunkBounds.planJson(plan, types);
    assertEquals("[[0,null,[1,\"a\"]],[1,[1,\"a\"],null]]", json);
    assertEquals(plan, ChunkBounds.planFromJson(json, types));
    assertThrows(IllegalArgumentException.class, () -> ChunkBounds.planFromJson("{}", types));
    assertThrows(
        IllegalArgumentException.class, () -> ChunkBounds.planFromJson("[[0,null]]", types));
    assertThrows(IllegalArgumentException.class, () -> ChunkBounds.planFromJson("[", types));
  }

  @Test
  void c098ExtentsAsJson() {
    assertEquals(
        "{\"kind\":\"int\",\"lo\":0,\"hi\":7,\"rows\":8}",
        SnapshotExtent.ofInt(0, 7, 8).toJson(List.of(INT)));
    assertEquals(
        SnapshotExtent.ofInt(0, 7, 8),
        SnapshotExtent.fromJson("{\"kind\":\"int\",\"lo\":0,\"hi\":7,\"rows\":8}", List.of(INT)));
    List<SqlServerType> types = List.of(INT, VARCHAR);
    SnapshotExtent keyset = SnapshotExtent.ofKeyset(key(3, "z"));
    assertEquals("{\"kind\":\"keyset\",\"max\":[3,\"z\"]}", keyset.toJson(types));
    assertEquals(keyset, SnapshotExtent.fromJson(keyset.toJson(types), types));
    assertEquals(
        "{\"kind\":\"keyset\",\"max\":null}", SnapshotExtent.ofKeyset(null).toJson(List.of()));
    assertEquals(
        SnapshotExtent.ofKeyset(null),
        SnapshotExtent.fromJson("{\"kind\":\"keyset\",\"max\":null}", List.of()));
    assertThrows(
        IllegalArgumentException.class,
        () -> SnapshotExtent.fromJson("{\"kind\":\"range\"}", List.of(INT)));
    assertThrows(
        IllegalArgumentException.class,
        () -> SnapshotExtent.fromJson("{\"kind\":\"int\",\"lo\":0,\"hi\":7}", List.of(INT)));
    assertThrows(IllegalArgumentException.class, () -> SnapshotExtent.ofInt(5, 4, 0));
  }
}
