/**
 * The demo database: a demo and test tool, not part of the library's API.
 *
 * <p>{@link org.lakecdc.pipelines.demo.DemoDatabase} loads TPC-H {@code orders} and {@code
 * lineitem} into the SQL Server CDC simulator and writes a seeded change history on both tables
 * (including a daylight-saving fall-back), part by part as jobs stream it, so that the README's
 * commands stream a database without a SQL Server.
 */
package org.lakecdc.pipelines.demo;
