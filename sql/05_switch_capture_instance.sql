-- lakecdc: switch a table to a new capture instance (after ALTER TABLE ADD COLUMN, or to change
-- the captured columns), without losing a change.
--
-- SQL Server captures a table with at most two instances. A running lakecdc stream follows the
-- newer one by itself: it reads the older instance below the newer one's start LSN S and the newer
-- one from S, and records a capture_instance_switched fact. The steps:
--
--   1. enable the new instance (this script, step 1);
--   2. grant the reading login SELECT on its change table (step 2): without it the stream stops at
--      S with an error printing this GRANT;
--   3. verify (step 3);
--   4. disable the old instance only after the stream has committed a batch past S AND one more
--      batch after it (a replay of the switch batch still reads the old instance below S): the
--      facts table shows the capture_instance_switched event and a later batch. Step 4 is
--      commented out on purpose; run it by hand then. Disabling earlier loses changes
--      (DataLossError).
--
-- Run as db_owner with sqlcmd variables:
--
--   sqlcmd -S host -d sales -U admin -i sql/05_switch_capture_instance.sql \
--     -v SchemaName=dbo TableName=orders OldCaptureInstance=dbo_orders \
--        NewCaptureInstance=dbo_orders_v2 GatingRole=cdc_reader_orders LoginName=lakecdc_reader
--
-- Idempotent. Microsoft docs "sys.sp_cdc_enable_table", "sys.sp_cdc_disable_table".

-- 1. The new capture instance (all current columns; same gating role).
IF NOT EXISTS (SELECT 1 FROM cdc.change_tables WHERE capture_instance = N'$(NewCaptureInstance)')
    EXEC sys.sp_cdc_enable_table
        @source_schema = N'$(SchemaName)',
        @source_name = N'$(TableName)',
        @capture_instance = N'$(NewCaptureInstance)',
        @role_name = N'$(GatingRole)',
        @supports_net_changes = 0;
GO

-- 2. The reading login may read the new change table.
DECLARE @sql nvarchar(max) = N'GRANT SELECT ON cdc.' + QUOTENAME(N'$(NewCaptureInstance)_CT')
    + N' TO ' + QUOTENAME(N'$(LoginName)');
EXEC (@sql);
GO

-- 3. Verify: both instances, oldest first; the new one's start_lsn is S. The login's permission
--    on the new change table must be 1.
EXEC sys.sp_cdc_help_change_data_capture
    @source_schema = N'$(SchemaName)', @source_name = N'$(TableName)';
EXECUTE AS USER = N'$(LoginName)';
SELECT HAS_PERMS_BY_NAME(N'cdc.' + QUOTENAME(N'$(NewCaptureInstance)_CT'), N'OBJECT', N'SELECT')
    AS new_change_table_select;
REVERT;
GO

-- 4. Later, once the facts show the switch and one more batch (see above):
-- EXEC sys.sp_cdc_disable_table
--     @source_schema = N'$(SchemaName)',
--     @source_name = N'$(TableName)',
--     @capture_instance = N'$(OldCaptureInstance)';
-- GO
