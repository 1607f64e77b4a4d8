-- lakecdc: enable change data capture on one table, with a gating role.
--
-- Run as db_owner of the database (after 01_enable_cdc_database.sql), with sqlcmd variables:
--
--   sqlcmd -S host -d sales -U admin -i sql/02_enable_cdc_table.sql \
--     -v SchemaName=dbo TableName=orders CaptureInstance=dbo_orders GatingRole=cdc_reader_orders
--
-- Idempotent: an existing capture instance of that name is left as it is. Microsoft docs
-- "sys.sp_cdc_enable_table". docs/sql-server.md explains the choices.

-- The capture instance: all columns of the table, no net-change function (lakecdc reads the change
-- table cdc.[<CaptureInstance>_CT] directly), and a gating role. SQL Server creates the role when it
-- does not exist; only its members (or logins granted SELECT on the change table, see
-- 04_least_privilege_login.sql) can read the changes. The table should have a primary key or a
-- unique index: lakecdc uses it (index_column_list) for snapshot key ranges.
IF NOT EXISTS (SELECT 1 FROM cdc.change_tables WHERE capture_instance = N'$(CaptureInstance)')
    EXEC sys.sp_cdc_enable_table
        @source_schema = N'$(SchemaName)',
        @source_name = N'$(TableName)',
        @capture_instance = N'$(CaptureInstance)',
        @role_name = N'$(GatingRole)',
        @supports_net_changes = 0;
GO

-- What CDC now captures; start_lsn is where the instance begins.
EXEC sys.sp_cdc_help_change_data_capture
    @source_schema = N'$(SchemaName)', @source_name = N'$(TableName)';
GO
