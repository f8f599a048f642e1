-- Nexmark on the built-in generator: live results with nothing external.
-- Run in the shell: .read examples/nexmark.sql   (Ctrl-C ends the SUBSCRIBE at the end)
CREATE TABLE bid (
  auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,
  date_time TIMESTAMP(3), extra VARCHAR,
  WATERMARK FOR date_time AS date_time - INTERVAL '2' SECOND
) WITH (connector = 'nexmark', 'nexmark.table' = 'bid', 'events.per.second' = '2000',
        'nexmark.inter.event.ms' = '10');

-- Q5-style: bids per auction in 10-second tumbling windows, shown as each window closes.
CREATE MATERIALIZED VIEW bids_per_auction AS
  SELECT window_start, window_end, auction, COUNT(*) AS bids
  FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end, auction
  EMIT ON WINDOW CLOSE;

-- The three hottest auctions of each window (window Top-N).
CREATE MATERIALIZED VIEW hot_auctions AS
  SELECT * FROM (
    SELECT window_start, auction, bids,
           ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY bids DESC, auction) AS place
    FROM bids_per_auction) ranked
  WHERE place <= 3;

-- Q7-style: the highest bid so far in each 10-second window, current as bids arrive.
CREATE MATERIALIZED VIEW top_price AS
  SELECT window_start, MAX(price) AS max_price, COUNT(*) AS bids
  FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end;

SELECT * FROM system.sources;

-- Changes stream in as windows close: +I rows for each window's top three.
SUBSCRIBE hot_auctions;
