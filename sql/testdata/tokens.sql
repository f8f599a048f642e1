SELECT a, b.c, `weird name` FROM t WHERE x >= 10 AND y <> 'it''s' -- trailing comment
----
SELECT 1.5, .5, 1e5, 2E-3, 0x1F, 7. FROM t # hash comment
----
a||b <= c != d :: e => f <=> g -> h ->> i := j
----
/* block
comment */ INSERT INTO t VALUES (?, ?, 'x''y', 'back\slash', "dq")
----
SELECT - -5, 5--1 is a comment, as in standard SQL
, a
----
SELECT x'1F', N'abc', _utf8mb4'z', @v, @@sql_mode
----
SELECT 'multi
line', ünï FROM t;;
