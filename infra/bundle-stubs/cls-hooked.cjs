// What the Lambda bundles carry instead of `cls-hooked` (infra/bundling.ts, BUNDLE_ALIASES;
// issue #37): the same namespace API on Node's AsyncLocalStorage.
//
// aws-xray-sdk-core (which Powertools' Tracer loads) keeps the current X-Ray segment in a
// cls-hooked namespace, created when the SDK is loaded, tracing on or off. cls-hooked tracks
// every async resource with an `async_hooks` hook that has init, before, after and *destroy*
// callbacks and a Map entry per live resource: every promise of the process (LanceDB's load,
// the AWS SDK's middleware stack, Arrow) gets an id, a Map entry and a destroy callback that V8
// can only run after collecting it. In the cold-start profiles that was the largest part of the
// garbage collector's time (docs/benchmarks.md, "Cold starts: the tracer's context").
// AsyncLocalStorage propagates its store to a new resource from the current one and needs no
// destroy tracking.
//
// Only what the X-Ray SDK calls is implemented (context_utils.js: createNamespace,
// getNamespace, destroyNamespace; a namespace's get, set, createContext, enter, exit, run,
// runAndReturn, bind), with cls-hooked's semantics: a context is an object inheriting from the
// active one; `run` makes a child context active for the function and everything asynchronous
// it starts; `enter` outside any `run` makes a context active for the whole process (as the
// SDK's Lambda mode does at load with the facade segment's context, which every invocation then
// sees). test/infra/cls-hooked-stub.test.ts checks these against cls-hooked, through the X-Ray SDK.
'use strict';
const { AsyncLocalStorage } = require('node:async_hooks');

const ERROR_SYMBOL = 'error@context';

class Namespace {
  constructor(name) {
    this.name = name;
    this.storage = new AsyncLocalStorage();
    /** The context `enter` made active outside any `run`: the process-wide one. */
    this.root = null;
  }

  get active() {
    return this.storage.getStore() ?? this.root;
  }

  set(key, value) {
    const context = this.active;
    if (!context) throw new Error('No context available. ns.run() or ns.bind() must be called first.');
    context[key] = value;
    return value;
  }

  get(key) {
    return this.active?.[key];
  }

  createContext() {
    const context = Object.create(this.active ?? Object.prototype);
    context._ns_name = this.name;
    return context;
  }

  enter(context) {
    if (!context) throw new Error('context must be provided for entering');
    if (this.storage.getStore() === undefined) this.root = context;
    else this.storage.enterWith(context);
  }

  exit(context) {
    if (!context) throw new Error('context must be provided for exiting');
    if (this.storage.getStore() === undefined && this.root === context) this.root = null;
  }

  run(fn) {
    const context = this.createContext();
    try {
      this.storage.run(context, fn, context);
      return context;
    } catch (err) {
      if (err && typeof err === 'object') err[ERROR_SYMBOL] = context;
      throw err;
    }
  }

  runAndReturn(fn) {
    let value;
    this.run((context) => {
      value = fn(context);
    });
    return value;
  }

  bind(fn, context) {
    const bound = context ?? this.active ?? this.createContext();
    const storage = this.storage;
    return function clsBind(...args) {
      try {
        return storage.run(bound, () => fn.apply(this, args));
      } catch (err) {
        if (err && typeof err === 'object') err[ERROR_SYMBOL] = bound;
        throw err;
      }
    };
  }
}

const namespaces = new Map();

module.exports = {
  getNamespace(name) {
    return namespaces.get(name);
  },
  createNamespace(name) {
    if (!name) throw new Error('namespace must be given a name.');
    const namespace = new Namespace(name);
    namespaces.set(name, namespace);
    return namespace;
  },
  destroyNamespace(name) {
    namespaces.delete(name);
  },
  reset() {
    namespaces.clear();
  },
  ERROR_SYMBOL,
};
