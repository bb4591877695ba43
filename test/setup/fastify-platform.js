// The jest project `fastify` (jest.config.js): the apps its suites start run on Fastify.
process.env.DURABLE_TEST_PLATFORM = 'fastify';
