-- lakecdc: enable change data capture on a database.
--
-- Run as a member of sysadmin (SQL Server, Azure SQL Managed Instance) or db_owner (Azure SQL
-- Database), with sqlcmd variables:
--
--   sqlcmd -S host -U admin -v DatabaseName=sales -i sql/01_enable_cdc_database.sql
--
-- Idempotent: a database that already has CDC is left as it is. docs/sql-server.md explains each
-- step; Microsoft docs "Enable and disable change data capture" and "sys.sp_cdc_enable_db".
-- On Azure SQL Database connect to the database itself: USE only names the current database there.

USE [$(DatabaseName)];
GO

-- 1. CDC on the database: creates the cdc schema, the cdc user and, on SQL Server, the capture and
--    cleanup SQL Server Agent jobs when the first table is enabled (SQL Server Agent must run).
IF NOT EXISTS (SELECT 1 FROM sys.databases WHERE name = DB_NAME() AND is_cdc_enabled = 1)
    EXEC sys.sp_cdc_enable_db;
GO

-- 2. Snapshot isolation, only if the pipeline reads snapshots with --isolationLevel=snapshot
--    (reads committed row versions without waiting for writers' locks; costs tempdb space). The
--    pipeline never reads with NOLOCK. Uncomment to allow it:
-- ALTER DATABASE CURRENT SET ALLOW_SNAPSHOT_ISOLATION ON;
-- GO

-- 3. How long CDC keeps changes (the cleanup job's retention, minutes; SQL Server's default is
--    4320 = 3 days). A stream stopped longer than this loses changes and fails with DataLossError;
--    pick a retention longer than any outage you want to survive. Uncomment to change it:
-- EXEC sys.sp_cdc_change_job @job_type = N'cleanup', @retention = 4320;
-- GO

SELECT name, is_cdc_enabled FROM sys.databases WHERE name = DB_NAME();
GO
