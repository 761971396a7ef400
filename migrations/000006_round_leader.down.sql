DROP TABLE round_leader;
