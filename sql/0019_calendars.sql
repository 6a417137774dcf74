-- Business calendars (docs/scheduling.md, "Calendars"): named, shared objects that jobs and
-- workflows name with a mode, SKIP (no fire on an excluded day or time) or ONLY (fires on the
-- calendar's business days only). What a calendar excludes is decided by its rules
-- (common/cron/business_calendar.h), which the API checks before anything is written here; the
-- schema keeps what a reader relies on: one row per day, values in their ranges, a calendar in
-- use never deleted. Every change is one transaction with its audit entry ("calendar.create",
-- "calendar.update", "calendar.import", "calendar.delete"), written by PgCalendarStore.

CREATE TABLE calendar (
    id              bigserial    PRIMARY KEY,
    -- What jobs files and the command line name it by (ids stay the API's keys).
    name            text         NOT NULL,
    description     varchar(255) NOT NULL DEFAULT '',
    -- An IANA zone: which day and time of day an instant is, for this calendar.
    time_zone       varchar(64)  NOT NULL DEFAULT 'UTC',
    -- The business weekdays, bit 0 Monday ... bit 6 Sunday; NULL: every day is one.
    business_days   smallint     CHECK (business_days BETWEEN 0 AND 127),
    -- Optimistic versioning: a change names the version it read; + 1 on every change.
    version         integer      NOT NULL DEFAULT 1,
    created_at      timestamptz  NOT NULL DEFAULT now(),
    updated_at      timestamptz  NOT NULL DEFAULT now(),
    CONSTRAINT calendar_name_key UNIQUE (name),
    CONSTRAINT calendar_name_format CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,63}$')
);

-- A calendar's days: excluded dates (holidays) and included ones (make-up working days). A day
-- is listed once, excluded or included (the primary key); year 0 is every year, for excluded
-- dates only. Whether the day exists in its month is the rules' to check.
CREATE TABLE calendar_date (
    calendar_id  bigint       NOT NULL REFERENCES calendar (id) ON DELETE CASCADE,
    year         integer      NOT NULL CHECK (year = 0 OR year BETWEEN 1970 AND 2999),
    month        integer      NOT NULL CHECK (month BETWEEN 1 AND 12),
    day          integer      NOT NULL CHECK (day BETWEEN 1 AND 31),
    included     boolean      NOT NULL DEFAULT false,
    name         varchar(200) NOT NULL DEFAULT '',
    -- '' for a date entered by hand; otherwise the import that brought it (an .ics file's
    -- source name), which a later import of the same source replaces as a whole.
    source       varchar(255) NOT NULL DEFAULT '',
    -- The iCalendar event (UID) an imported date came from.
    source_uid   varchar(255) NOT NULL DEFAULT '',
    CONSTRAINT calendar_date_once PRIMARY KEY (calendar_id, year, month, day),
    CONSTRAINT calendar_date_included_has_year CHECK (NOT included OR year <> 0)
);

-- Time ranges of every day the calendar excludes, in its local wall time, seconds since
-- midnight; kept in the order they were given (position).
CREATE TABLE calendar_time (
    calendar_id  bigint   NOT NULL REFERENCES calendar (id) ON DELETE CASCADE,
    position     integer  NOT NULL CHECK (position >= 0),
    start_s      integer  NOT NULL CHECK (start_s BETWEEN 0 AND 86399),
    end_s        integer  NOT NULL CHECK (end_s BETWEEN 0 AND 86399),
    PRIMARY KEY (calendar_id, position)
);

-- A job's and a workflow's calendar, and what they do with it. No cascade: a calendar a job or
-- workflow names cannot be deleted (the store says which name it first).
ALTER TABLE job_info ADD COLUMN calendar_id bigint REFERENCES calendar (id);
ALTER TABLE job_info ADD COLUMN calendar_mode text NOT NULL DEFAULT 'SKIP' CHECK (calendar_mode IN ('SKIP', 'ONLY'));
CREATE INDEX job_info_calendar ON job_info (calendar_id) WHERE calendar_id IS NOT NULL;

ALTER TABLE workflow ADD COLUMN calendar_id bigint REFERENCES calendar (id);
ALTER TABLE workflow ADD COLUMN calendar_mode text NOT NULL DEFAULT 'SKIP' CHECK (calendar_mode IN ('SKIP', 'ONLY'));
CREATE INDEX workflow_calendar ON workflow (calendar_id) WHERE calendar_id IS NOT NULL;

-- The schedule thread's pre-read (0001's job_info_due) reads a job's calendar too, and stays an
-- index-only scan in due order: the index includes the two columns.
DROP INDEX job_info_due;
CREATE INDEX job_info_due ON job_info (trigger_next_time)
    INCLUDE (id, schedule_type, schedule_conf, timezone, misfire_strategy, trigger_last_time, calendar_id, calendar_mode)
    WHERE trigger_status = 1;
