console.log("lint: clean");
