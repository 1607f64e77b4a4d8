-- lakecdc: the least-privilege login the pipeline reads one table's changes with.
--
-- Everything the reader needs, and nothing more (docs/sql-server.md, "What the login may do"):
--   * SELECT on the source table: CDC's metadata procedures (sp_cdc_help_change_data_capture,
--     sp_cdc_get_captured_columns, sp_cdc_get_ddl_history, fn_cdc_get_min_lsn) only answer for a
--     table the login may read, and snapshots read it;
--   * membership in the capture instance's gating role;
--   * SELECT on the change table cdc.[<CaptureInstance>_CT]: lakecdc reads it directly. Each capture
--     instance needs its own grant, also a newer one after a switch (05_switch_capture_instance.sql).
-- Nothing else: no write access, no db_owner, no VIEW SERVER STATE, nothing in msdb; the
-- sys.fn_cdc_* functions and cdc.lsn_time_mapping need no grant.
--
-- Run as sysadmin (SQL Server, Managed Instance), with sqlcmd variables; run it again with other
-- SchemaName/TableName/CaptureInstance/GatingRole values for each further table:
--
--   sqlcmd -S host -U admin -i sql/04_least_privilege_login.sql -v DatabaseName=sales \
--     LoginName=lakecdc_reader LoginPassword="..." SchemaName=dbo TableName=orders \
--     CaptureInstance=dbo_orders GatingRole=cdc_reader_orders
--
-- The pipeline then connects with --user=lakecdc_reader and the password in an environment
-- variable (--passwordEnv) or a file (--passwordFile), never on the command line. On Azure SQL
-- Database, replace the login and user with a contained user (CREATE USER ... WITH PASSWORD) or a
-- Microsoft Entra identity, and run the database part only. Idempotent.

USE [master];
GO

IF SUSER_ID(N'$(LoginName)') IS NULL
BEGIN
    DECLARE @create nvarchar(max) = N'CREATE LOGIN ' + QUOTENAME(N'$(LoginName)')
        + N' WITH PASSWORD = ' + QUOTENAME(N'$(LoginPassword)', N'''') + N', CHECK_POLICY = ON';
    EXEC (@create);
END;
GO

USE [$(DatabaseName)];
GO

IF DATABASE_PRINCIPAL_ID(N'$(LoginName)') IS NULL
BEGIN
    DECLARE @user nvarchar(max) = N'CREATE USER ' + QUOTENAME(N'$(LoginName)')
        + N' FOR LOGIN ' + QUOTENAME(N'$(LoginName)');
    EXEC (@user);
END;
GO

DECLARE @sql nvarchar(max);

-- 1. SELECT on the source table.
SET @sql = N'GRANT SELECT ON ' + QUOTENAME(N'$(SchemaName)') + N'.' + QUOTENAME(N'$(TableName)')
    + N' TO ' + QUOTENAME(N'$(LoginName)');
EXEC (@sql);

-- 2. Membership in the gating role (skipped when the instance has none).
IF DATABASE_PRINCIPAL_ID(N'$(GatingRole)') IS NOT NULL
   AND IS_ROLEMEMBER(N'$(GatingRole)', N'$(LoginName)') = 0
BEGIN
    SET @sql = N'ALTER ROLE ' + QUOTENAME(N'$(GatingRole)') + N' ADD MEMBER '
        + QUOTENAME(N'$(LoginName)');
    EXEC (@sql);
END;

-- 3. SELECT on the change table of the capture instance.
SET @sql = N'GRANT SELECT ON cdc.' + QUOTENAME(N'$(CaptureInstance)_CT') + N' TO '
    + QUOTENAME(N'$(LoginName)');
EXEC (@sql);
GO

-- Verify as the user: both must be 1.
EXECUTE AS USER = N'$(LoginName)';
SELECT HAS_PERMS_BY_NAME(QUOTENAME(N'$(SchemaName)') + N'.' + QUOTENAME(N'$(TableName)'),
           N'OBJECT', N'SELECT') AS source_table_select,
       HAS_PERMS_BY_NAME(N'cdc.' + QUOTENAME(N'$(CaptureInstance)_CT'), N'OBJECT', N'SELECT')
           AS change_table_select;
REVERT;
GO
