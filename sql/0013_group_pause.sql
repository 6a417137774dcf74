-- Pausing a group stops its running jobs at once and marks them, so that resuming the group
-- starts exactly those again and not jobs that were stopped before the pause. Starting or
-- stopping a job by itself clears its mark.
ALTER TABLE job_info ADD COLUMN paused_with_group boolean NOT NULL DEFAULT false;
