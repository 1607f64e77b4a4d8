/**
 * SQL Server log sequence numbers and LSN ranges as Beam values: public API.
 *
 * <p>{@link org.lakecdc.io.mssqlcdc.lsn.Lsn} is the {@code binary(10)} value of {@code
 * __$start_lsn} and {@code sys.fn_cdc_get_max_lsn} (SQL Server documentation, "cdc.&lt;capture
 * instance&gt;_CT"), ordered as SQL Server orders it. {@link org.lakecdc.io.mssqlcdc.lsn.LsnRange}
 * and {@link org.lakecdc.io.mssqlcdc.lsn.LsnRangeTracker} are the restriction and the tracker of
 * the splittable change reader. Each value type gives its Beam coder ({@code Lsn.coder()}, {@code
 * LsnRange.coder()}). No JDBC here.
 */
package org.lakecdc.io.mssqlcdc.lsn;
