-- lakecdc: an optional heartbeat for quiet databases.
--
-- CDC's max LSN only moves when capture writes cdc.lsn_time_mapping: on each captured commit, and
-- on an idle database about every 5 minutes. So on a quiet database the completeness verdict
-- finalized_until trails real time by up to ~5 minutes plus the period. This script makes a
-- one-row table, captured by CDC, that a SQL Server Agent job updates every IntervalSeconds
-- seconds: the lag drops to about that interval. lakecdc itself never writes to the source.
--
-- Run as sysadmin (it creates an Agent job in msdb), with sqlcmd variables:
--
--   sqlcmd -S host -U admin -i sql/03_heartbeat.sql -v DatabaseName=sales IntervalSeconds=10
--
-- Idempotent. Not for Azure SQL Database (no SQL Server Agent: use an Elastic Job or any
-- scheduler running the UPDATE below). To remove: delete the job cdc_heartbeat_<DatabaseName>,
-- EXEC sys.sp_cdc_disable_table N'dbo', N'cdc_heartbeat', N'dbo_cdc_heartbeat', then drop the table.
-- The capture instance dbo_cdc_heartbeat is not a table to stream: leave it out of the jobs.

USE [$(DatabaseName)];
GO

IF OBJECT_ID(N'dbo.cdc_heartbeat', N'U') IS NULL
BEGIN
    CREATE TABLE dbo.cdc_heartbeat (id tinyint NOT NULL PRIMARY KEY, beat_at datetime2(3) NOT NULL);
    INSERT INTO dbo.cdc_heartbeat (id, beat_at) VALUES (1, SYSUTCDATETIME());
END;
GO

IF NOT EXISTS (SELECT 1 FROM cdc.change_tables WHERE capture_instance = N'dbo_cdc_heartbeat')
    EXEC sys.sp_cdc_enable_table
        @source_schema = N'dbo',
        @source_name = N'cdc_heartbeat',
        @capture_instance = N'dbo_cdc_heartbeat',
        @role_name = NULL,
        @supports_net_changes = 0;
GO

USE [msdb];
GO

DECLARE @job sysname = N'cdc_heartbeat_$(DatabaseName)';
IF NOT EXISTS (SELECT 1 FROM msdb.dbo.sysjobs WHERE name = @job)
BEGIN
    EXEC msdb.dbo.sp_add_job @job_name = @job,
        @description = N'lakecdc heartbeat: keeps the CDC max LSN moving on a quiet database';
    EXEC msdb.dbo.sp_add_jobstep @job_name = @job, @step_name = N'beat',
        @subsystem = N'TSQL', @database_name = N'$(DatabaseName)',
        @command = N'UPDATE dbo.cdc_heartbeat SET beat_at = SYSUTCDATETIME() WHERE id = 1;';
    -- Daily schedule, repeating every IntervalSeconds seconds (freq_subday_type 2 = seconds;
    -- SQL Server Agent accepts 10 seconds or more).
    EXEC msdb.dbo.sp_add_jobschedule @job_name = @job, @name = N'every few seconds',
        @freq_type = 4, @freq_interval = 1,
        @freq_subday_type = 2, @freq_subday_interval = $(IntervalSeconds);
    EXEC msdb.dbo.sp_add_jobserver @job_name = @job;
END;
GO
