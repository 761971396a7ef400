DROP TABLE dead_letters;
DROP TABLE messages;
DROP TABLE queues;
