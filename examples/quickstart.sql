-- quickstart: a table with a watermark, a TUMBLE view in both emit modes, rows arriving,
-- and the views changing as they do. Run: go run ./cmd/streamsql -f examples/quickstart.sql
CREATE TABLE bids (auction BIGINT, price BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);

CREATE MATERIALIZED VIEW per10s AS
  SELECT window_start, window_end, auction, COUNT(*) AS n, SUM(price) AS total
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end, auction;

CREATE MATERIALIZED VIEW closed AS
  SELECT window_start, auction, COUNT(*) AS n
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end, auction
  EMIT ON WINDOW CLOSE;

-- First rows: the current view shows open windows at once; nothing is closed yet.
INSERT INTO bids VALUES (1, 10, TIMESTAMP '2024-01-01 00:00:01'),
                        (1, 20, TIMESTAMP '2024-01-01 00:00:09.500'),
                        (2, 5,  TIMESTAMP '2024-01-01 00:00:10');
SELECT * FROM per10s ORDER BY window_start, auction;
SELECT * FROM closed;

-- The watermark passes 00:00:09.999: the first window closes and appears in `closed`.
INSERT INTO bids VALUES (2, 7, TIMESTAMP '2024-01-01 00:00:11');
SELECT * FROM closed ORDER BY window_start, auction;
SELECT * FROM system.watermarks;

-- A late row: counted and kept in system.late_rows, never applied.
INSERT INTO bids VALUES (1, 99, TIMESTAMP '2024-01-01 00:00:05');
SELECT view_name, event_time, watermark, row_json FROM system.late_rows ORDER BY view_name;
SELECT * FROM per10s ORDER BY window_start, auction;
