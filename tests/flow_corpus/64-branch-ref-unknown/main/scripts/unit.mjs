console.log("unit tests: 3 passed");
