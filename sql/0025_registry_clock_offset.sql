-- What a cronwheel executor estimated of the admin's clock at its last registration (its
-- clockOffsetMs and clockDelayMs, each within a day): the admin's clock minus its own, and the
-- round trip of the exchange it measured that on. NULL for XXL-JOB's executors, which do not say,
-- and until a cronwheel executor has measured one exchange.
ALTER TABLE job_registry ADD COLUMN clock_offset_ms bigint, ADD COLUMN clock_delay_ms bigint;
