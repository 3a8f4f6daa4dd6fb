-- The readonly setting of this session's user (serve refuses a user that can
-- write): 0 read and write, 1 read only, 2 read only but settings may change.
SELECT toUInt8(value) AS readonly FROM system.settings WHERE name = 'readonly';
