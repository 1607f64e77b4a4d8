package org.lakecdc.io.mssqlcdc.client;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * A scripted stand-in for mssql-jdbc: connections whose statements answer from rules (the first
 * rule whose SQL fragment the statement contains) and record every statement with its parameters.
 * Result values are given as mssql-jdbc returns them for {@code getObject}; the typed getters
 * convert. Reading a temporal value through {@code getTimestamp}, {@code getDate} or {@code
 * getTime} fails the test: the client must never go through the JVM's zone.
 */
final class ScriptedJdbc {
  /** One executed statement. */
  record Executed(String sql, List<String> parameters) {}

  /** A result: column type names and rows. */
  record Result(List<String> types, List<String> labels, List<Object[]> rows) {}

  private record Rule(Predicate<String> matches, Result result, SQLException error, int[] times) {}

  private final List<Rule> rules = new ArrayList<>();
  private final List<Executed> executed = new ArrayList<>();
  private int connections;
  private int closedConnections;

  /** Answers statements containing {@code fragment} with one row of values. */
  ScriptedJdbc answer(String fragment, Object... row) {
    List<String> types = new ArrayList<>();
    for (Object v : row) {
      types.add(
          v instanceof Integer ? "int" : v instanceof LocalDateTime ? "datetime2" : "varchar");
    }
    return answer(fragment, new Result(types, null, List.<Object[]>of(row)));
  }

  /** Answers statements containing {@code fragment} with rows. */
  ScriptedJdbc answer(String fragment, Result result) {
    rules.add(new Rule(sql -> sql.contains(fragment), result, null, new int[] {-1}));
    return this;
  }

  /** Fails statements containing {@code fragment}, {@code times} times (-1: always). */
  ScriptedJdbc fail(String fragment, SQLException error, int times) {
    rules.add(new Rule(sql -> sql.contains(fragment), null, error, new int[] {times}));
    return this;
  }

  /** Every statement run, in order. */
  List<Executed> executed() {
    return executed;
  }

  /** Statements run whose text contains {@code fragment}. */
  List<Executed> executed(String fragment) {
    return executed.stream().filter(e -> e.sql().contains(fragment)).toList();
  }

  /** Connections opened. */
  int connections() {
    return connections;
  }

  /** Connections closed. */
  int closedConnections() {
    return closedConnections;
  }

  /** The connector a {@link SqlCdcClient} opens connections with. */
  SqlSession.Connector connector() {
    return () -> {
      connections++;
      return connection();
    };
  }

  /** A client over this script with the given settings and recorded sleeps. */
  SqlCdcClient client(SqlCdcClientFactory config, List<Long> sleeps) {
    return new SqlCdcClient(config, connector(), new RetryPolicy(millis -> sleeps.add(millis)));
  }

  private Connection connection() {
    boolean[] closed = {false};
    InvocationHandler h =
        (proxy, method, args) -> {
          switch (method.getName()) {
            case "prepareStatement":
              return statement((String) args[0]);
            case "close":
              if (!closed[0]) {
                closed[0] = true;
                closedConnections++;
              }
              return null;
            case "isClosed":
              return closed[0];
            default:
              throw new UnsupportedOperationException("Connection." + method.getName());
          }
        };
    return (Connection)
        Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, h);
  }

  private PreparedStatement statement(String sql) {
    Map<Integer, String> parameters = new TreeMap<>();
    PreparedStatement[] self = new PreparedStatement[1];
    InvocationHandler h =
        (proxy, method, args) -> {
          switch (method.getName()) {
            case "setString":
              parameters.put((Integer) args[0], (String) args[1]);
              return null;
            case "setFetchSize":
            case "close":
              return null;
            case "executeQuery":
              executed.add(new Executed(sql, new ArrayList<>(parameters.values())));
              for (Rule r : rules) {
                if (r.times()[0] != 0 && r.matches().test(sql)) {
                  if (r.times()[0] > 0) {
                    r.times()[0]--;
                  }
                  if (r.error() != null) {
                    throw r.error();
                  }
                  return resultSet(r.result(), self[0]);
                }
              }
              throw new AssertionError("No scripted answer for: " + sql);
            default:
              throw new UnsupportedOperationException("PreparedStatement." + method.getName());
          }
        };
    self[0] =
        (PreparedStatement)
            Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {PreparedStatement.class}, h);
    return self[0];
  }

  /** A result set over scripted rows. */
  static ResultSet resultSet(Result result, java.sql.Statement statement) {
    int[] row = {-1};
    Object[] last = {null};
    InvocationHandler meta =
        (proxy, method, args) -> {
          switch (method.getName()) {
            case "getColumnCount":
              return result.types().size();
            case "getColumnTypeName":
              return result.types().get((Integer) args[0] - 1);
            default:
              throw new UnsupportedOperationException("ResultSetMetaData." + method.getName());
          }
        };
    InvocationHandler h =
        (proxy, method, args) -> {
          String name = method.getName();
          switch (name) {
            case "next":
              row[0]++;
              return row[0] < result.rows().size();
            case "close":
              return null;
            case "getStatement":
              return statement;
            case "wasNull":
              return last[0] == null;
            case "getMetaData":
              return Proxy.newProxyInstance(
                  ScriptedJdbc.class.getClassLoader(),
                  new Class<?>[] {ResultSetMetaData.class},
                  meta);
            case "getTimestamp":
            case "getDate":
            case "getTime":
              throw new AssertionError(name + " reads through the JVM's zone; never use it");
            default:
              break;
          }
          if (!name.startsWith("get")) {
            throw new UnsupportedOperationException("ResultSet." + name);
          }
          int index =
              args[0] instanceof Integer
                  ? (Integer) args[0] - 1
                  : result.labels().indexOf((String) args[0]);
          if (index < 0) {
            throw new SQLException("Invalid column name " + args[0]);
          }
          Object v = result.rows().get(row[0])[index];
          last[0] = v;
          switch (name) {
            case "getString":
              return v == null ? null : v.toString();
            case "getInt":
              return v == null ? 0 : ((Number) v).intValue();
            case "getLong":
              return v == null ? 0L : ((Number) v).longValue();
            case "getShort":
              return v == null ? (short) 0 : ((Number) v).shortValue();
            case "getFloat":
              return v == null ? 0f : ((Number) v).floatValue();
            case "getDouble":
              return v == null ? 0d : ((Number) v).doubleValue();
            case "getBoolean":
              return v != null && (Boolean) v;
            case "getBigDecimal":
              return (BigDecimal) v;
            case "getBytes":
              return v == null ? null : ((byte[]) v).clone();
            case "getObject":
              if (args.length == 2 && v != null && !((Class<?>) args[1]).isInstance(v)) {
                throw new SQLException(
                    "Cannot read " + v.getClass().getSimpleName() + " as " + args[1]);
              }
              return v;
            default:
              throw new UnsupportedOperationException("ResultSet." + name);
          }
        };
    return (ResultSet)
        Proxy.newProxyInstance(
            ScriptedJdbc.class.getClassLoader(), new Class<?>[] {ResultSet.class}, h);
  }

  /** A result with labelled columns (for procedures read by column name). */
  static Result labelled(List<String> labels, List<String> types, Object[]... rows) {
    return new Result(types, labels, Arrays.asList(rows));
  }

  /** A result with typed columns, read by index. */
  static Result typed(List<String> types, Object[]... rows) {
    return new Result(types, null, Arrays.asList(rows));
  }

  /** A SQL Server error as mssql-jdbc raises it. */
  static SQLException error(String message, String state, int number) {
    return new SQLException(message, state, number);
  }
}
