/** a2a-express-kit/sqlite: the durable task store on better-sqlite3 (an optional peer dependency). */
export {};
