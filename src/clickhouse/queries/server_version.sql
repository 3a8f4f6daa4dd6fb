-- The server's version text (doctor).
SELECT version() AS version;
