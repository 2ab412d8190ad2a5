#!/usr/bin/env node
import { createRaskApp } from './rask-app.js';

/** `cdk synth` / `cdk deploy` entry point (see cdk.json). Settings come from `rask:*` context. */
const { app } = createRaskApp();
app.synth();
