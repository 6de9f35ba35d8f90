-- Migration 5: multisection (issue 6) — how many commits a bisection
-- tests at once, and which round a step belonged to.  Steps of one round
-- ran at the same time and their verdicts are applied together
-- (bisect_mark_round); a step without a round is a round of its own.
-- (004 is the host placement migration, from its own branch.)
ALTER TABLE bisections ADD COLUMN slots INTEGER NOT NULL DEFAULT 1 CHECK (slots >= 1);
ALTER TABLE steps ADD COLUMN round INTEGER;
